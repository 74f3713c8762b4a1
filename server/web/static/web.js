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
    var link = el(bots[s.seat] === null ? "span" : "a", "bot", [names[s.seat]]);
    if (bots[s.seat] !== null) link.href = "/bots/" + encodeURIComponent(bots[s.seat]);
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
      var who = m.seats.map(function (s) { return s.bot === null ? "seat " + s.seat : names[s.bot] || s.bot; }).join(" v ");
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

  // ---- a person's seat: the hand and every legal action to click -----------------------
  // The decision comes from GET /play/{id}/state (the person's own, with the session
  // cookie); the answer goes to POST /play/{id}/turns/{turn} with the CSRF token; the
  // match's event stream says when the table moved. Each legal action is exactly one
  // element whose data-action is its JSON as the referee listed it, but for a long run of
  // whole numbers: one number field (input[data-key], min, max) and one button (data-range)
  // whose data-action is the number in the field.
  var SEAT_WORDS = {to: "to", target: "on"};

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }
  function clockText(ms) {
    var s = Math.max(0, Math.ceil(ms / 1000));
    var m = Math.floor(s / 60);
    s = s % 60;
    return m + ":" + (s < 10 ? "0" : "") + s;
  }

  function playTable(root, page) {
    var board = document.querySelector("#board .board");
    var actionsBox = document.getElementById("actions");
    var prompt = document.getElementById("prompt");
    var message = document.getElementById("play-message");
    var selectionBox = document.getElementById("selection");
    var countdown = document.getElementById("countdown");
    var me = page.seat;
    var shown = page.turns;      // log entries the board shows
    var current = null;          // the pending decision on screen
    var faces = {};
    var selected = [];           // hand elements selected
    var byPick = 0;              // actions shown only once their cards are picked (0: all shown)
    var busy = false;
    var ticking = null;
    var loading = false, again = false, later = null;

    function say(text, kind) {
      message.textContent = text || "";
      message.className = "play-message" + (kind ? " " + kind : "");
    }
    function isCard(x) { return typeof x === "string" && has(faces, x); }
    function cardsOf(a) {
      var out = [];
      Object.keys(a).forEach(function (k) {
        var v = a[k];
        if (isCard(v)) out.push(v);
        else if (Array.isArray(v)) v.forEach(function (c) { if (isCard(c)) out.push(c); });
      });
      return out;
    }
    function valueKids(key, v) {
      if (isCard(v)) return [cardEl(faces[v])];
      if (Array.isArray(v) && v.length && v.every(isCard)) {
        return [el("span", "cards", v.map(function (c) { return cardEl(faces[c]); }))];
      }
      if (typeof v === "number" && SEAT_WORDS[key] && page.names[v] !== undefined) return [who(v, page.names)];
      return [el("span", "value", [typeof v === "string" ? v : JSON.stringify(v)])];
    }
    function actionKids(a) {
      var kids = [];
      Object.keys(a).forEach(function (k, i) {
        var v = a[k];
        if (i) kids.push(" ");
        if (k === "call" && typeof v === "string") { kids.push(el("span", "call call-" + v, [v + "!"])); return; }
        if (v === true) { kids.push(el("span", "verb", [k])); return; }
        if (isCard(k) && typeof v === "number" && page.names[v] !== undefined) {  // a card played on a seat
          kids.push(cardEl(faces[k]), " ", el("span", "verb", ["on"]), " ", who(v, page.names));
          return;
        }
        kids.push(el("span", "verb", [SEAT_WORDS[k] || k]), " ");
        valueKids(k, v).forEach(function (x) { kids.push(x); });
      });
      return kids;
    }
    function describe(a) {  // the action in words, for a screen reader and a tooltip
      return Object.keys(a).map(function (k) {
        var v = a[k];
        if (v === true) return k;
        if (isCard(k) && typeof v === "number" && page.names[v] !== undefined) return faces[k].title + " on " + page.names[v];
        if (typeof v === "number" && SEAT_WORDS[k] && page.names[v] !== undefined) return SEAT_WORDS[k] + " " + page.names[v];
        if (isCard(v)) return k + " " + faces[v].title;
        if (Array.isArray(v)) return k + " " + v.map(function (c) { return isCard(c) ? faces[c].title : String(c); }).join(", ");
        return k + " " + v;
      }).join(" ");
    }
    function handEls() {
      return Array.prototype.slice.call(board.querySelectorAll('.seat[data-seat="' + me + '"] .hand [data-card]'));
    }
    function centreEls() {  // the cards in the middle (a lot, revealed cards to take)
      return Array.prototype.slice.call(board.querySelectorAll(".centre [data-card]"));
    }
    function actionEls() {
      return Array.prototype.slice.call(root.querySelectorAll("[data-action], .hand .playable")).filter(function (e) {
        return !e.closest("[hidden]") && !e.classList.contains("filtered") && !e.disabled;
      });
    }

    function clear() {
      current = null;
      selected = [];
      byPick = 0;
      actionsBox.textContent = "";
      selectionBox.hidden = true;
      handEls().concat(centreEls()).forEach(function (c) {
        c.removeAttribute("data-action");
        c.removeAttribute("tabindex");
        c.removeAttribute("role");
        c.classList.remove("playable", "selectable", "unplayable", "selected");
      });
      root.classList.remove("my-turn");
      if (ticking) { clearInterval(ticking); ticking = null; }
      showCountdown(false);
    }

    // A run of more than RANGE whole numbers under one key (a bid from 0 to 156): a number
    // field with its legal range and one button playing the number chosen, not a button each.
    var RANGE = 12;
    function rangeOf(list) {
      if (list.length <= RANGE) return null;
      var key = Object.keys(list[0])[0];
      var values = [];
      for (var i = 0; i < list.length; i++) {
        var keys = Object.keys(list[i]), v = list[i][key];
        if (keys.length !== 1 || keys[0] !== key || !Number.isInteger(v)) return null;
        values.push(v);
      }
      values.sort(function (x, y) { return x - y; });
      for (var k = 1; k < values.length; k++) if (values[k] !== values[k - 1] + 1) return null;
      return {key: key, min: values[0], max: values[values.length - 1]};
    }
    function stepperEl(range, cautionOf) {
      function actionOf(v) { var a = {}; a[range.key] = v; return a; }
      function cautionAt(v) { return cautionOf[JSON.stringify(actionOf(v))]; }
      var input = el("input", "range-value");
      input.type = "number";
      input.id = "range-" + range.key;
      input.min = String(range.min);
      input.max = String(range.max);
      input.step = "1";
      input.inputMode = "numeric";
      input.value = String(range.min);
      input.setAttribute("data-key", range.key);
      var label = el("label", "group-label", [range.key]);
      label.htmlFor = input.id;
      var less = el("button", "step", ["\u2212"]), more = el("button", "step", ["+"]);
      less.type = more.type = "button";
      less.setAttribute("aria-label", range.key + " one less");
      more.setAttribute("aria-label", range.key + " one more");
      var play = el("button", "action range-play");
      play.type = "button";
      play.setAttribute("data-range", range.key);
      var note = el("p", "range-note");
      note.setAttribute("aria-live", "polite");
      // the marked values before any is chosen: runs of one caution ("16 to 156: …")
      var marks = el("ul", "range-marks"), run = null;
      for (var v = range.min; v <= range.max + 1; v++) {
        var text = v <= range.max ? cautionAt(v) : undefined;
        if (run && text !== run.text) {
          marks.appendChild(el("li", "caution", [range.key + " " + (run.from === v - 1 ? run.from : run.from + " to " + (v - 1)) + ": " + run.text]));
          run = null;
        }
        if (text && !run) run = {from: v, text: text};
      }
      function show() {
        var v = Number(input.value);
        var ok = input.value !== "" && Number.isInteger(v) && v >= range.min && v <= range.max;
        play.disabled = !ok;
        play.classList.remove("caution");
        if (!ok) {
          play.replaceChildren(range.key);
          play.removeAttribute("data-action");
          note.className = "range-note";
          note.textContent = "a whole number from " + range.min + " to " + range.max;
          return;
        }
        var a = actionOf(v), why = cautionAt(v);
        play.setAttribute("data-action", JSON.stringify(a));
        play.replaceChildren(el("span", "verb", [range.key]), " ", el("span", "value", [String(v)]));
        play.title = describe(a) + (why ? " \u2014 " + why : "");
        if (why) { play.classList.add("caution"); play.appendChild(el("span", "caution-mark", ["\u26a0"])); }
        note.className = "range-note" + (why ? " caution" : "");
        note.textContent = why ? range.key + " " + v + ": " + why : "from " + range.min + " to " + range.max;
      }
      function step(by) {
        var v = Number(input.value);
        v = Number.isInteger(v) && input.value !== "" ? v + by : range.min;
        input.value = String(Math.max(range.min, Math.min(range.max, v)));
        show();
      }
      less.addEventListener("click", function () { step(-1); });
      more.addEventListener("click", function () { step(1); });
      input.addEventListener("input", show);
      input.addEventListener("keydown", function (e) {
        if (e.key === "Enter") { e.preventDefault(); if (!play.disabled) play.click(); }
      });
      show();
      var box = el("div", "action-group range", [label, less, input, more, play]);
      return el("div", "range-box", [box, note, marks.children.length ? marks : null]);
    }

    function turnLabel(table) {
      var s = table.seats[me];
      var b = s && s.badges.filter(function (x) { return x.kind === "turn"; })[0];
      return b ? b.label : "to act";
    }

    function showDecision(d, table) {
      clear();
      if (!d) return;
      current = d;
      faces = {};
      [table.faces || {}, d.faces || {}].forEach(function (f) { Object.keys(f).forEach(function (k) { faces[k] = f[k]; }); });
      root.classList.add("my-turn");
      prompt.textContent = "Your turn: " + turnLabel(table) + ".";
      var hand = handEls();
      var inHand = {};
      hand.forEach(function (c) { inHand[c.dataset.card] = true; });
      // a card of the hand played by one action of one key: the card itself is that action
      var simple = {}, count = {};
      d.legal_actions.forEach(function (a) {
        var keys = Object.keys(a);
        if (keys.length === 1 && isCard(a[keys[0]]) && inHand[a[keys[0]]]) {
          var c = a[keys[0]];
          count[c] = (count[c] || 0) + 1;
          simple[c] = a;
        }
      });
      var bound = {}, rest = [], mentioned = {};
      d.legal_actions.forEach(function (a) {
        var keys = Object.keys(a);
        var c = keys.length === 1 ? a[keys[0]] : null;
        if (c !== null && count[c] === 1 && simple[c] === a) return;
        rest.push(a);
        cardsOf(a).forEach(function (x) { mentioned[x] = true; });
      });
      var handUsed = false;
      hand.forEach(function (c) {
        var card = c.dataset.card;
        if (count[card] === 1) {
          handUsed = true;
          c.classList.add("playable");
          c.tabIndex = 0;
          c.setAttribute("role", "button");
          c.setAttribute("aria-label", describe(simple[card]));
          if (!bound[card]) { c.setAttribute("data-action", JSON.stringify(simple[card])); bound[card] = c; }
        } else if (mentioned[card]) {
          handUsed = true;
          c.classList.add("selectable");
          c.tabIndex = 0;
          c.setAttribute("role", "button");
          c.setAttribute("aria-label", (faces[card] ? faces[card].title : card) + ": select");
        }
      });
      centreEls().forEach(function (c) {  // the middle's cards an action takes: picked like the hand's
        if (!mentioned[c.dataset.card]) return;
        c.classList.add("selectable");
        c.tabIndex = 0;
        c.setAttribute("role", "button");
        c.setAttribute("aria-label", (faces[c.dataset.card] ? faces[c.dataset.card].title : c.dataset.card) + ": select");
      });
      if (handUsed) hand.forEach(function (c) {
        if (!c.classList.contains("playable") && !c.classList.contains("selectable")) c.classList.add("unplayable");
      });
      // every other action, grouped by its shape (its keys), a button each
      var groups = {}, order = [];
      rest.forEach(function (a) {
        var shape = Object.keys(a).join("+");
        if (!groups[shape]) { groups[shape] = []; order.push(shape); }
        groups[shape].push(a);
      });
      var cautionOf = {};  // an action's JSON -> why the game marks it for this seat
      (d.cautions || []).forEach(function (c) {
        c.actions.forEach(function (i) { cautionOf[JSON.stringify(d.legal_actions[i])] = c.text; });
      });
      var ranged = null;  // the key of a number field, when there is one
      order.forEach(function (shape) {
        var list = groups[shape];
        var range = rangeOf(list);
        if (range) { ranged = range.key; actionsBox.appendChild(stepperEl(range, cautionOf)); return; }
        var box = el("div", "action-group");
        list.forEach(function (a) {
          var json = JSON.stringify(a);
          var b = el("button", "action", actionKids(a));
          b.type = "button";
          b.setAttribute("data-action", json);
          b.title = describe(a);
          if (cautionOf[json]) {
            b.classList.add("caution");
            b.appendChild(el("span", "caution-mark", ["\u26a0"]));
            b.title += " \u2014 " + cautionOf[json];
          }
          box.appendChild(b);
        });
        actionsBox.appendChild(box);
      });
      var plays = Object.keys(bound).length > 0;
      if (hand.length && handUsed) {
        say(plays ? (rest.length ? "Click a card of your hand to play it, or an action below." : "Click a card of your hand to play it.")
                  : "Pick cards of your hand to narrow the actions below to those holding them, or click an action.");
      } else if (ranged) {
        say("Choose the " + ranged + " below (\u2212 and +, or type it), then play it with its button or Enter" +
            (order.length > 1 ? "; or another action." : "."));
      } else {
        say(rest.length === 1 ? "One action below: click it to play it." : "Choose one of the actions below.");
      }
      foldLongList();
      var pickable = hand.concat(centreEls()).some(function (c) { return c.classList.contains("selectable"); });
      showKeys({cards: handUsed, pass: passOf(d.legal_actions) !== null, unselect: pickable});
      startClock(d);
      var first = actionEls()[0];
      if (first && !root.contains(document.activeElement)) first.focus({preventScroll: true});
    }

    // the person's clock line: its standing text ("60 s a move · bank 5:00"), or while they
    // decide, the countdown in its place ("0:58 to move · bank 5:00", then "bank 4:12")
    function showCountdown(on) {
      if (!countdown) return;
      countdown.hidden = !on;
      countdown.parentNode.querySelector(".standing").hidden = on;
      if (!on) countdown.textContent = "";
    }

    function startClock(d) {
      if (!countdown) return;
      showCountdown(true);
      var deadline = Date.now() + d.left_ms;
      function tick() {
        var left = deadline - Date.now();
        var elapsed = d.deadline_ms - left;
        var text;
        if (typeof d.move_ms === "number" && elapsed < d.move_ms) {
          text = clockText(d.move_ms - elapsed) + " to move · bank " + clockText(d.bank_ms);
          countdown.className = "countdown";
        } else {
          text = "bank " + clockText(left);
          countdown.className = "countdown overtime";
        }
        if (left < 10000) countdown.className = "countdown urgent";
        countdown.textContent = text;
        if (left <= 0) { clearInterval(ticking); ticking = null; countdown.textContent = "time!"; }
      }
      tick();
      ticking = setInterval(tick, 250);
    }

    // the keys hint names only the keys that do something in this decision
    function showKeys(on) {
      root.querySelectorAll("#keys [data-keys]").forEach(function (part) { part.hidden = !on[part.dataset.keys]; });
    }
    function passOf(actions) {  // the one action the P key plays: a pass (or the end of a payment)
      var pass = actions.filter(function (a) {
        return Object.keys(a).length === 1 && (a.pass === true || a.done === true);
      });
      return pass.length === 1 ? pass[0] : null;
    }

    // A list of actions taller than most of the window (45 pairs of cards to discard, on a
    // phone): the actions made of cards one picks on the table show once their cards are
    // picked, as many as hold them (9, then 1); the others stay.
    function foldLongList() {
      if (actionsBox.scrollHeight <= window.innerHeight * 0.6) return;
      var pickable = {};
      handEls().concat(centreEls()).forEach(function (c) {
        if (c.classList.contains("selectable")) pickable[c.dataset.card] = true;
      });
      actionsBox.querySelectorAll("button[data-action]").forEach(function (b) {
        var cards = cardsOf(JSON.parse(b.getAttribute("data-action")));
        if (cards.length && cards.every(function (c) { return pickable[c]; })) { b.classList.add("by-pick"); byPick++; }
      });
      if (!byPick) return;
      say("Pick a card on the table: the actions holding it show below (" + byPick + " in all).");
      filter();
    }

    function select(c) {
      var i = selected.indexOf(c);
      if (i >= 0) { selected.splice(i, 1); c.classList.remove("selected"); }
      else { selected.push(c); c.classList.add("selected"); }
      filter();
    }
    function filter() {
      var want = selected.map(function (c) { return c.dataset.card; });
      var matching = [];
      actionsBox.querySelectorAll("[data-action]").forEach(function (b) {
        var cards = cardsOf(JSON.parse(b.getAttribute("data-action")));
        var ok = want.every(function (c) {
          var i = cards.indexOf(c);
          if (i < 0) return false;
          cards.splice(i, 1);
          return true;
        });
        b.classList.toggle("filtered", want.length > 0 ? !ok : b.classList.contains("by-pick"));
        if (ok) matching.push(b);
      });
      if (!want.length) { selectionBox.hidden = true; return; }
      selectionBox.hidden = false;
      selectionBox.replaceChildren(el("span", null, ["Selected: "]),
        el("span", "cards", want.map(function (c) { return cardEl(faces[c]); })),
        " — " + (matching.length === 1 ? "press Enter or click to play it" :
                 matching.length ? matching.length + " actions hold them, below" : "no action holds all of these") +
        " (Esc: unselect)");
      if (matching.length === 1) matching[0].focus({preventScroll: true});
    }

    function send(action) {
      if (!current || busy) return;
      busy = true;
      var turn = current.turn;
      var held = actionEls().filter(function (e) { return e.tagName === "BUTTON"; });
      held.forEach(function (e) { e.disabled = true; });
      function release() { held.forEach(function (e) { e.disabled = false; }); }
      root.classList.add("sending");
      say("Playing…");
      fetch(page.urls.answer + turn, {
        method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrfToken()},
        body: JSON.stringify({action: action})
      }).then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (body) { return {ok: r.ok, status: r.status, body: body}; });
      }).then(function (res) {
        busy = false;
        root.classList.remove("sending");
        if (res.ok) {
          clear();
          say("");
          prompt.textContent = "Played. Waiting for the others…";
          refresh();  // the table with the move just played, whether or not the stream says so
          return;
        }
        var text = res.body && res.body.error ? res.body.error.message : "HTTP " + res.status;
        say(text, "error");
        if (res.status === 409 || res.status === 422) { clear(); refresh(); }
        else release();
      }).catch(function (e) {
        busy = false;
        root.classList.remove("sending");
        say("Could not reach the server (" + e.message + "): try again.", "error");
        release();
      });
    }

    function times(list) {
      (list || []).forEach(function (t, i) {
        var b = root.querySelector('.clock[data-seat="' + i + '"] .bank');
        if (b && typeof t.bank_ms === "number") b.textContent = clockText(t.bank_ms);
      });
    }

    function apply(st) {
      if (st.turns < shown) return;  // an older answer than what is drawn
      var same = st.turns === shown && current && st.decision && st.decision.turn === current.turn;
      root.setAttribute("data-status", st.status);
      document.getElementById("status").textContent = st.status;
      times(st.times);
      if (st.status === "finished" || st.status === "aborted") { location.reload(); return; }
      if (same) return;  // nothing moved: keep what the person selected
      shown = st.turns;
      root.setAttribute("data-turns", String(st.turns));
      renderBoard(board, st.table, st.entry, st.turns, st.turns, page);
      showDecision(st.decision, st.table);
      if (!st.decision) {
        var waiting = st.to_act === null ? "" : st.to_act === me ? "you (the referee is dealing your turn)" : page.names[st.to_act];
        prompt.textContent = st.status === "queued" ? "Waiting for the match to start…" : "Waiting for " + waiting + "…";
        // published any moment now; otherwise the stream says when the table moves, and a look
        // every 10 s covers a step it missed (a reconnecting stream, a busy server)
        later = setTimeout(refresh, st.to_act === me ? 1000 : 10000);
      }
    }

    function refresh() {
      if (later) { clearTimeout(later); later = null; }
      if (loading) { again = true; return; }
      loading = true;
      fetch(page.urls.state + "?wait=1", {headers: {"Accept": "application/json"}, credentials: "same-origin", cache: "no-store"})
        .then(function (r) {
          return r.json().then(function (body) {
            if (!r.ok) throw new Error(body && body.error ? body.error.message : "HTTP " + r.status);
            return body;
          });
        })
        .then(apply)
        .catch(function (e) {
          say("Could not load the table (" + e.message + "): trying again…", "error");
          later = setTimeout(refresh, 3000);
        })
        .then(function () {
          loading = false;
          if (again) { again = false; refresh(); }
        });
    }

    root.addEventListener("click", function (e) {
      var target = e.target.closest && e.target.closest("[data-action], .hand .playable, #board .selectable");
      if (!target || !root.contains(target) || busy) return;
      e.preventDefault();
      if (target.hasAttribute("data-action")) { send(JSON.parse(target.getAttribute("data-action"))); return; }
      if (target.classList.contains("playable")) {  // a second copy of a card: the first one's action
        var first = root.querySelector('.hand [data-action][data-card="' + target.dataset.card + '"]');
        if (first) send(JSON.parse(first.getAttribute("data-action")));
        return;
      }
      select(target);
    });
    document.addEventListener("keydown", function (e) {
      if (!current || busy || e.altKey || e.ctrlKey || e.metaKey) return;
      var tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
      var list = actionEls();
      var at = list.indexOf(document.activeElement);
      if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        if (!list.length) return;
        e.preventDefault();
        var next = at < 0 ? 0 : (at + (e.key === "ArrowRight" ? 1 : list.length - 1)) % list.length;
        list[next].focus();
      } else if ((e.key === "Enter" || e.key === " ") && tag !== "BUTTON" && document.activeElement &&
                 root.contains(document.activeElement) && document.activeElement.matches("#board [data-card][role=button]")) {
        e.preventDefault();
        document.activeElement.click();
      } else if (/^[1-9]$/.test(e.key)) {
        var card = handEls()[parseInt(e.key, 10) - 1];
        if (card && (card.classList.contains("playable") || card.classList.contains("selectable"))) {
          e.preventDefault();
          card.focus();
          card.click();
        }
      } else if (e.key === "p" || e.key === "P") {
        var pass = passOf(current.legal_actions);
        if (pass) { e.preventDefault(); send(pass); }
      } else if (e.key === "Escape" && selected.length) {
        e.preventDefault();
        selected.forEach(function (c) { c.classList.remove("selected"); });
        selected = [];
        filter();
      }
    });

    follow(function () { return page.urls.events + "?after=" + (shown - 1); }, {
      step: function (e) {
        var d = JSON.parse(e.data);
        if (d.step > shown) refresh();
      },
      over: function (e, source) {
        source.close();
        refresh();
      }
    }, function () { say("Connection lost: trying again in a few seconds…", "error"); });

    if (page.decision) showDecision(page.decision, page.table);
    else if (page.to_act === me) refresh();
  }

  // ---- the sign-in page: making an account (the API's POST /accounts) ---------------------
  function newAccount(form) {
    var error = document.getElementById("account-error");
    var shown = document.getElementById("new-token");
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      error.textContent = "";
      var wanted = {name: form.querySelector("input[name=name]").value};
      var invite = form.querySelector("input[name=invite]");  // sign-up by invite only
      if (invite) wanted.invite = invite.value.trim();
      fetch(form.dataset.api, {method: "POST", headers: {"Content-Type": "application/json", "Accept": "application/json"},
                               body: JSON.stringify(wanted)})
        .then(function (r) { return r.json().then(function (body) { return {ok: r.ok, body: body}; }); })
        .then(function (res) {
          if (!res.ok) { error.textContent = res.body && res.body.error ? res.body.error.message : "refused"; return; }
          document.getElementById("new-token-text").textContent = res.body.token;
          document.getElementById("token").value = res.body.token;
          form.hidden = true;
          shown.hidden = false;
          var go = el("button", "btn primary", ["I have kept it: sign in"]);
          go.type = "button";
          go.id = "signin-new";
          go.addEventListener("click", function () { document.getElementById("signin-form").submit(); });
          shown.replaceChild(go, shown.lastElementChild);
        })
        .catch(function (x) { error.textContent = "Could not reach the server: " + x.message; });
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
          var who = m.seats.map(function (s) { return s.bot === null ? "seat " + s.seat : known[s.bot] || s.bot; }).join(" v ");
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
  var p = document.getElementById("table");
  if (p && p.classList.contains("play-table") && document.getElementById("turn-panel")) playTable(p, page);
  var a = document.getElementById("account-form");
  if (a) newAccount(a);
  var t = document.getElementById("tournament");
  if (t && t.dataset.status !== "finished" && t.dataset.status !== "aborted") tournament(t);
  window.cardarena = {renderBoard: renderBoard};
})();
