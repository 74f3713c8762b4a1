// cardarena's pages: the few things that need a browser. Every page works without this file.
// Everything a page draws from data is built as DOM nodes with text content: names are user input.
(function () {
  "use strict";

  // ---- building blocks -------------------------------------------------------
  function el(tag, cls, kids) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    (kids || []).forEach(function (k) {
      if (k === null || k === undefined || k === false) return;
      e.appendChild(typeof k === "string" ? document.createTextNode(k) : k);
    });
    return e;
  }
  function has(o, key) { return o !== null && typeof o === "object" && o[key] !== undefined && o[key] !== null; }
  function pageData() {
    var node = document.getElementById("page-data");
    return node ? JSON.parse(node.textContent || "{}") : {};
  }

  // ---- the card table: the same markup as templates/web/table.html --------------
  function motifEl(m, cls) {
    return el("span", cls, [el("span", "rank", [m.rank]), el("span", "suit", [m.suit])]);
  }
  function cardEl(f) {  // macros.html card()
    var c;
    if (f.kind === "french" || f.kind === "motif") {
      c = el("span", "card " + f.colour, [el("span", "rank", [f.rank]), el("span", "suit", [f.suit])]);
    } else if (f.kind === "double") {
      c = el("span", "card double", [motifEl(f.high, "motif " + f.high.colour), motifEl(f.low, "motif low " + f.low.colour)]);
    } else {
      c = el("span", "card named " + f.family, [el("span", "name", [f.name]), el("span", "value", [String(f.value)])]);
    }
    c.setAttribute("data-card", f.text);
    c.title = f.title;
    return c;
  }
  function faceEl(t, text) {
    var f = t.faces && t.faces[text];
    return f ? cardEl(f) : el("span", "token", [text]);
  }
  function who(seat, names) { return el("b", "who", [names[seat]]); }
  function backs(n) {
    var out = [];
    for (var i = 0; i < n; i++) out.push(el("span", "back"));
    return out;
  }

  function seatEl(t, s, names, bots) {
    var cls = "seat" + (s.to_act ? " to-act" : "") + (s.last ? " last" : "") + (s.out ? " out" : "");
    var link = el("a", "bot", [names[s.seat]]);
    link.href = "/bots/" + encodeURIComponent(bots[s.seat]);
    var head = el("div", "seat-head", [link, el("span", "seatno", ["seat " + s.seat]),
      has(s, "count") ? el("span", "count", [s.count + " card" + (s.count !== 1 ? "s" : "")]) : null]);
    var badges = el("div", "badges", s.badges.map(function (b) {
      return el("span", "badge " + (b.kind || "role"), [b.label, has(b, "value") ? el("b", null, [b.value]) : null]);
    }));
    var hand;
    if (s.hand !== null && s.hand !== undefined) {
      hand = el("div", "hand", s.hand.map(function (c) { return faceEl(t, c); }));
    } else {
      hand = el("div", "hand", s.count ? backs(Math.min(s.count, 16)).concat(
        s.count > 16 ? [el("span", "more", ["+" + (s.count - 16)])] : []) : []);
    }
    var box = el("div", cls, [head, badges, hand]);
    box.setAttribute("data-seat", String(s.seat));
    return box;
  }

  function pileEl(t, p, names) {
    var kids = [el("div", "pile-title", [p.title])];
    if (p.cards.length || p.backs) {
      var cards = p.cards.map(function (c) {
        return el("figure", "played" + (c.last ? " last" : "") + (c.win ? " win" : ""), [faceEl(t, c.card),
          el("figcaption", null, [has(c, "seat") ? el("span", "by", [names[c.seat]]) : null,
            has(c, "note") ? el("span", "note", [c.note]) : null])]);
      });
      if (p.backs) {
        var stack = el("span", "stack", backs(Math.min(p.backs, 3)));
        stack.title = p.backs + " face down";
        cards.push(stack);
      }
      kids.push(el("div", "pile-cards", cards));
    }
    if (has(p, "winner") || has(p, "note")) {
      kids.push(el("p", "pile-note", [has(p, "winner") ? "won by " : null, has(p, "winner") ? who(p.winner, names) : null,
        has(p, "winner") && has(p, "note") ? " · " : null, has(p, "note") ? p.note : null]));
    }
    if (p.lines) {
      kids.push(el("ol", "lines", p.lines.map(function (l) {
        var li = el("li", l.last ? "last" : null, [has(l, "seat") ? who(l.seat, names) : null,
          has(l, "seat") ? " " : null, l.text, has(l, "to") ? " " : null, has(l, "to") ? who(l.to, names) : null]);
        return li;
      })));
    }
    return el("div", "pile" + (has(p, "winner") ? " won" : ""), kids);
  }

  function lastLineEl(t, entry, names, step) {
    var kids = [el("span", "stepno", ["Step " + step]), " "];
    if (step === 0 || !t.last) {
      kids.push("The deal: nobody has played yet.");
    } else {
      kids.push(who(t.last.seat, names), " " + t.last.text);
      t.last.cards.forEach(function (c) { kids.push(" ", faceEl(t, c)); });
      if (has(t.last, "to")) kids.push(" ", who(t.last.to, names));
      if (entry && entry.fault) kids.push(" ", el("span", "fault", ["fault: " + entry.fault + " — the referee played for it"]));
    }
    return el("p", "last-action", kids);
  }

  function resultEl(outcome) {
    var head = [outcome.draw ? "Draw between " : "Winner: "];
    outcome.winners.forEach(function (row, i) {
      if (i) head.push(" and ");
      head.push(el("b", "who", [row.name]));
    });
    return el("div", "result", [el("p", "winner", head), el("ol", "standing", outcome.rows.map(function (row) {
      return el("li", null, [row.rank + ". ", el("b", "who", [row.name]),
        row.score !== null ? " · score " + row.score : null,
        row.forfeit ? " " : null, row.forfeit ? el("span", "fault", ["forfeit"]) : null]);
    }))]);
  }

  // Redraw `board` (a .board made by table.html's board()) for one step: the same markup.
  function renderBoard(board, t, entry, step, turns, page) {
    board.setAttribute("data-step", String(step));
    board.setAttribute("data-turns", String(turns));
    board.replaceChild(lastLineEl(t, entry, page.names, step), board.querySelector(".last-action"));
    board.querySelector(".facts").replaceChildren.apply(board.querySelector(".facts"), t.facts.map(function (f) {
      return el("div", "fact", [el("dt", null, [f.label]), el("dd", null, [f.value])]);
    }));
    t.seats.forEach(function (s) {
      var old = board.querySelector('.seat[data-seat="' + s.seat + '"]');
      if (old) old.replaceWith(seatEl(t, s, page.names, page.bots));
    });
    var centre = board.querySelector(".centre");
    centre.replaceChildren.apply(centre, t.centre.map(function (p) { return pileEl(t, p, page.names); }));
    var result = board.querySelector(".result");
    if (result) result.remove();
    if (page.outcome && step === turns) board.appendChild(resultEl(page.outcome));
  }

  // ---- replay viewer: fetch step k from the API and redraw --------------------------
  function replay(root, page) {
    var board = document.querySelector("#board .board");
    var log = document.getElementById("log");
    var total = parseInt(root.dataset.turns, 10);
    var wanted = parseInt(root.dataset.step, 10);
    var cache = {};

    function fetchStep(k) {
      if (!cache[k]) {
        cache[k] = fetch(root.dataset.api + k, {headers: {"Accept": "application/json"}}).then(function (r) {
          if (!r.ok) { delete cache[k]; throw new Error("step " + k + ": HTTP " + r.status); }
          return r.json();
        });
      }
      return cache[k];
    }
    function mark(k) {
      if (!log) return;
      var old = log.querySelector("li.current");
      if (old) old.classList.remove("current");
      var li = log.querySelector('li[data-step="' + k + '"]');
      if (li) { li.classList.add("current"); li.scrollIntoView({block: "nearest"}); }
    }
    function stepper(k) {
      document.getElementById("step-no").textContent = String(k);
      var targets = {first: 0, prev: Math.max(0, k - 1), next: Math.min(total, k + 1), last: total};
      Object.keys(targets).forEach(function (id) {
        var a = document.getElementById(id);
        a.setAttribute("data-step", String(targets[id]));
        a.href = "?step=" + targets[id];
      });
    }
    function go(k) {
      k = Math.max(0, Math.min(total, k));
      wanted = k;
      return fetchStep(k).then(function (s) {
        if (wanted !== k) return;  // a later key press won
        renderBoard(board, s.table, s.entry, s.step, s.turns, page);
        root.dataset.step = String(k);
        stepper(k);
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
      if (!a || !root.contains(a) && !(log && log.contains(a))) return;
      e.preventDefault();
      go(parseInt(a.dataset.step, 10));
    });
    if (wanted < total) fetchStep(wanted + 1).catch(function () {});
  }

  // ---- event streams: the browser reconnects by itself after the server ends one; a
  // refused stream (503/429: the server is busy) is closed for good, so try again later.
  function follow(url, handlers, onLost) {
    var source = null;
    function open(at) {
      source = new EventSource(at());
      Object.keys(handlers).forEach(function (name) {
        source.addEventListener(name, function (e) { handlers[name](e, source); });
      });
      source.onerror = function () {
        if (source.readyState !== EventSource.CLOSED) return;  // reconnecting by itself
        if (onLost) onLost();
        setTimeout(function () { open(at); }, 5000);
      };
    }
    open(url);
  }

  // ---- a running match: the event stream redraws the table ---------------------------
  function live(root, page) {
    var board = document.querySelector("#board .board");
    var status = document.getElementById("live-status");
    var base = root.dataset.events.split("?")[0];
    follow(function () {  // after the last step drawn, whenever (re)opened by hand
      return base + "?after=" + (parseInt(board.getAttribute("data-step"), 10) - 1);
    }, {
      step: function (e) {
        var d = JSON.parse(e.data);
        renderBoard(board, d.table, d.entry, d.step, d.step, page);
        root.dataset.step = String(d.step);
        document.getElementById("status").textContent = "running";
        status.textContent = "Live · step " + d.step + (d.to_act === null ? "" : " · " + page.names[d.to_act] + " to act");
      },
      over: function (e, source) {
        source.close();
        status.textContent = "The match is over: loading its record…";
        location.reload();
      }
    }, function () { status.textContent = "Connection lost: trying again in a few seconds…"; });
  }

  // ---- a running tournament: its event stream ----------------------------------------
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
    return el("span", "fault", [String(row.faults)]);
  }

  function tournament(root) {
    var names = JSON.parse(document.getElementById("bot-names").textContent || "{}");
    var bar = document.getElementById("progress");
    function cell(tr, content, cls) { tr.appendChild(el("td", cls, [content])); }
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
        var a = el("a", "bot", [names[row.bot] || row.bot]);
        a.href = "/bots/" + encodeURIComponent(row.bot);
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
    function matchItem(m) {
      var a = el("a", null, [m.id]);
      a.href = "/matches/" + encodeURIComponent(m.id);
      var who = m.seats.map(function (s) { return names[s.bot] || s.bot; }).join(" v ");
      var li = el("li", null, [a, " · ", el("span", "mstatus", [m.status]), " · " + who]);
      li.setAttribute("data-match", m.id);
      return li;
    }
    function updateMatch(m) {
      var list = document.getElementById("tmatches");
      var old = list.querySelector('li[data-match="' + m.id + '"]');
      if (old) { old.replaceWith(matchItem(m)); return; }
      if (list.querySelectorAll("li[data-match]").length >= parseInt(list.dataset.max || "100", 10)) return;
      var empty = list.querySelector("li.empty");
      if (empty) empty.remove();
      list.appendChild(matchItem(m));
    }
    follow(function () { return root.dataset.events; }, {
      progress: function (e) { render(JSON.parse(e.data)); },
      match: function (e) { updateMatch(JSON.parse(e.data)); },
      over: function (e, source) {
        source.close();
        render(JSON.parse(e.data));
        location.reload();
      }
    });
  }

  // ---- the leaderboard: each game's ladder matches in play, refreshed from its JSON twin --------
  function ladderInPlay(board) {
    var list = board.querySelector("ul.in-play");
    if (!list) return;
    function refresh() {
      fetch(board.dataset.ladder, {headers: {"Accept": "application/json"}}).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (data) {
        if (!data) return;
        var known = {};
        list.querySelectorAll("a[href^='/bots/']").forEach(function (a) {
          known[a.getAttribute("href").slice(6)] = a.textContent;
        });
        data.rankings.forEach(function (row) { known[row.bot] = row.name || row.bot; });
        list.textContent = "";
        data.in_play.forEach(function (m) {
          var a = el("a", null, [m.id]);
          a.href = "/matches/" + encodeURIComponent(m.id);
          var who = m.seats.map(function (s) { return known[s.bot] || s.bot; }).join(" v ");
          var li = el("li", null, [a, " · ", el("span", "mstatus", [m.status]),
                                   " · rotation " + m.rotation + "/" + m.rotations + " · " + who]);
          li.setAttribute("data-match", m.id);
          list.appendChild(li);
        });
        if (!data.in_play.length) list.appendChild(el("li", "empty", ["None now."]));
      }).catch(function () {});
    }
    setInterval(refresh, 5000);
  }

  var page = pageData();
  document.querySelectorAll("section.board[data-ladder]").forEach(ladderInPlay);
  var r = document.getElementById("replay");
  if (r) replay(r, page);
  var l = document.getElementById("live");
  if (l) live(l, page);
  var t = document.getElementById("tournament");
  if (t && t.dataset.status !== "finished" && t.dataset.status !== "aborted") tournament(t);
  window.cardarena = {renderBoard: renderBoard};
})();
