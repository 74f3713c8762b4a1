// cardarena's pages: the few things that need a browser. Every page works without this file.
(function () {
  "use strict";

  // ---- replay viewer: swap the board for the server-rendered step k ----
  function replay(root) {
    var board = document.getElementById("board");
    var log = document.getElementById("log");
    var total = parseInt(root.dataset.turns, 10);
    var step = parseInt(root.dataset.step, 10);
    var base = root.dataset.stepsUrl;
    var cache = {};
    var wanted = step;

    function fetchStep(k) {
      if (!cache[k]) {
        cache[k] = fetch(base + k, {headers: {"Accept": "text/html"}}).then(function (r) {
          if (!r.ok) { delete cache[k]; throw new Error("step " + k + ": HTTP " + r.status); }
          return r.text();
        });
      }
      return cache[k];
    }

    function mark(k) {
      if (!log) return;
      var old = log.querySelector("li.current");
      if (old) old.classList.remove("current");
      var li = log.querySelector('li[data-turn="' + (k - 1) + '"]');
      if (li) { li.classList.add("current"); li.scrollIntoView({block: "nearest"}); }
    }

    function go(k) {
      k = Math.max(0, Math.min(total, k));
      wanted = k;
      return fetchStep(k).then(function (html) {
        if (wanted !== k) return;  // a later key press won
        board.innerHTML = html;  // our own autoescaped fragment
        step = k;
        root.dataset.step = String(k);
        mark(k);
        history.replaceState(null, "", "?step=" + k);
        if (k < total) fetchStep(k + 1).catch(function () {});
      });
    }

    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
      var next = {ArrowRight: wanted + 1, ArrowLeft: wanted - 1, Home: 0, End: total}[e.key];
      if (next === undefined) return;
      e.preventDefault();
      go(next);
    });
    document.addEventListener("click", function (e) {
      var a = e.target.closest && e.target.closest("a[data-step]");
      if (!a || !(board.contains(a) || (log && log.contains(a)))) return;
      e.preventDefault();
      go(parseInt(a.dataset.step, 10));
    });
    if (step < total) fetchStep(step + 1).catch(function () {});
  }

  // ---- a running match: poll the public view; reload once it is over ----
  function live(root) {
    var target = document.getElementById("live-view");
    function tick() {
      fetch(root.dataset.url).then(function (r) { return r.ok ? r.text() : null; }).then(function (html) {
        if (html === null) return;
        target.innerHTML = html;
        var status = target.firstElementChild && target.firstElementChild.dataset.status;
        if (status === "finished" || status === "aborted") { location.reload(); return; }
        setTimeout(tick, 1000);
      }).catch(function () { setTimeout(tick, 3000); });
    }
    setTimeout(tick, 1000);
  }

  // ---- a running tournament: poll its JSON twin ----

  // x with one decimal exactly as the server's '%.1f' writes it. toFixed rounds
  // the float's exact value too, but an exact tie (….25, ….75: the only ties a
  // float can hold at one decimal) goes away from zero there and to even in Python.
  function fixed1(x) {
    var q = x * 4;
    if (Number.isInteger(q) && q % 2 !== 0) {
      var lo = Math.floor(x * 10);  // x * 10 is exact here: lo + 0.5
      return ((lo % 2 === 0 ? lo : lo + 1) / 10).toFixed(1);
    }
    return x.toFixed(1);
  }
  // "12.3 ± 1.4"; "" without a mean, no "±" without an interval (tournament.html's mean_ci)
  function meanCi(row) {
    if (typeof row.mean_score !== "number") return "";
    return fixed1(row.mean_score) + (typeof row.ci95 === "number" ? " \u00b1 " + fixed1(row.ci95) : "");
  }
  function faultCount(row) {
    if (typeof row.faults !== "number") return "";
    if (!row.faults) return "0";
    var span = document.createElement("span");
    span.className = "fault";
    span.textContent = String(row.faults);
    return span;
  }

  function tournament(root) {
    var names = JSON.parse(document.getElementById("bot-names").textContent || "{}");
    var bar = document.getElementById("progress");
    function cell(tr, text, cls) {
      var td = document.createElement("td");
      if (cls) td.className = cls;
      if (text instanceof Node) td.appendChild(text); else td.textContent = text;
      tr.appendChild(td);
    }
    function render(t) {
      document.getElementById("status").textContent = t.status;
      document.getElementById("done").textContent = t.progress.done;
      document.getElementById("total").textContent = t.progress.total;
      bar.max = Math.max(1, t.progress.total);
      bar.value = t.progress.done;
      var body = document.getElementById("standings");
      if (!t.standings.length) return;
      body.textContent = "";
      t.standings.forEach(function (row) {
        var tr = document.createElement("tr");
        var a = document.createElement("a");
        a.href = "/bots/" + encodeURIComponent(row.bot);
        a.className = "bot";
        a.textContent = names[row.bot] || row.bot;  // text, never markup: names are user input
        cell(tr, String(row.rank), "num");
        cell(tr, a);
        cell(tr, String(Math.round(row.points * 1000) / 1000), "num");
        cell(tr, String(row.matches), "num");
        cell(tr, row.wins === undefined ? "" : String(row.wins), "num");
        cell(tr, meanCi(row), "num mean");
        cell(tr, faultCount(row), "num");
        body.appendChild(tr);
      });
    }
    function renderMatches(data) {
      var list = document.getElementById("tmatches");
      if (!data || !data.matches.length) return;
      list.textContent = "";
      data.matches.forEach(function (m) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = "/matches/" + encodeURIComponent(m.id);
        a.textContent = m.id;
        li.appendChild(a);
        var who = m.seats.map(function (s) { return names[s.bot] || s.bot; }).join(" v ");
        li.appendChild(document.createTextNode(" · " + m.status + " · " + who));
        list.appendChild(li);
      });
    }
    function tick() {
      fetch(root.dataset.api + "/matches").then(function (r) { return r.ok ? r.json() : null; })
        .then(renderMatches).catch(function () {});
      fetch(root.dataset.api).then(function (r) { return r.ok ? r.json() : null; }).then(function (t) {
        if (!t) { setTimeout(tick, 2000); return; }
        render(t);
        if (t.status === "finished" || t.status === "aborted") { location.reload(); return; }
        setTimeout(tick, 500);
      }).catch(function () { setTimeout(tick, 2000); });
    }
    if (root.dataset.status !== "finished" && root.dataset.status !== "aborted") setTimeout(tick, 500);
  }

  var r = document.getElementById("replay");
  if (r) replay(r);
  var l = document.getElementById("live");
  if (l) live(l);
  var t = document.getElementById("tournament");
  if (t) tournament(t);
})();
