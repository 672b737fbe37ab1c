// Live pages: listen to /api/stream (Server-Sent Events) and swap in fresh server-rendered
// HTML for what moved; count clocks down between events. Plain JS, no library.
"use strict";

(function () {
  const root = document.querySelector("[data-live]");
  const loadedAt = new WeakMap();

  function tickClocks() {
    const now = Date.now();
    document.querySelectorAll(".clock").forEach(function (el) {
      if (!loadedAt.has(el)) loadedAt.set(el, now);
      const limit = parseFloat(el.dataset.limit);
      const elapsed = parseFloat(el.dataset.elapsed || "0") + (now - loadedAt.get(el)) / 1000;
      const left = Math.round(limit - elapsed);
      const format = el.dataset.format || "{s} s";  // "{s} s", "{s}秒": the page's language
      el.textContent = format.replace("{s}", left >= 0 ? left : "+" + (-left));
      el.classList.toggle("urgent", left >= 0 && left <= 5);
      el.classList.toggle("overtime", left < 0);
    });
  }
  setInterval(tickClocks, 250);
  tickClocks();

  // Appeal review: the step list opens scrolled to the step shown (the page itself does not move).
  document.querySelectorAll("[data-scroll-current]").forEach(function (box) {
    const row = box.querySelector(".current");
    if (row) {
      box.scrollTop += row.getBoundingClientRect().top - box.getBoundingClientRect().top -
        (box.clientHeight - row.offsetHeight) / 2;
    }
  });

  // The console's filters apply as soon as one is picked (the button is there without script).
  document.querySelectorAll("form.filters select").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });

  if (!root || !window.EventSource) return;
  const mode = root.dataset.live;
  let pending = null;

  function fetchHtml(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); });
  }

  // A referee typing a reason or a correction must not lose it to a live refresh: the fresh
  // HTML replaces the live part, and what was typed (with the focus, the caret and which
  // <details> were open) goes back into the same field of the same item (data-key), which
  // stays where it was on the screen. Only while that cannot be done do updates pause, and
  // #live-note says why in words: text being composed with an input method, an item typed
  // in that was answered meanwhile, or the stream lost.
  const note = document.getElementById("live-note");
  let pausedFor = "";
  let offline = false;
  let composing = false;

  function say() {
    if (!note) return;
    const reason = offline ? "offline" : pausedFor;
    note.hidden = !reason;
    note.textContent = reason ? note.dataset[reason] : "";
  }

  function pause(reason) {
    pausedFor = reason;
    say();
  }

  function changed(el) {
    if (el.tagName === "SELECT") {
      return Array.prototype.some.call(el.options, function (o) { return o.selected !== o.defaultSelected; });
    }
    return el.value !== el.defaultValue;
  }

  function fieldKey(el) {
    const item = el.closest("[data-key]");
    const form = el.form;
    return [item ? item.dataset.key : "", form ? form.getAttribute("action") + " " + form.className : "",
            el.name].join("\n");
  }

  function fields(holder) {
    const out = new Map();
    holder.querySelectorAll("input, select, textarea").forEach(function (el) {
      if (el.type !== "hidden" && el.type !== "submit") out.set(fieldKey(el), el);
    });
    return out;
  }

  // Swap in the fresh live part unless that would lose typed text; true if swapped.
  function apply(html) {
    const fresh = document.createElement("div");
    fresh.innerHTML = html;
    const twins = fields(fresh);
    const active = root.contains(document.activeElement) ? document.activeElement : null;
    const typed = [];
    fields(root).forEach(function (el, key) {
      if (changed(el) || el === active) typed.push([key, el]);
    });
    if (typed.some(function (pair) { return changed(pair[1]) && !twins.has(pair[0]); })) {
      pause("changed");
      return false;
    }
    const anchor = active || (typed[0] && typed[0][1]);
    const anchorKey = anchor ? fieldKey(anchor) : null;
    const anchorTop = anchor ? anchor.getBoundingClientRect().top : 0;
    const caret = active && typeof active.selectionStart === "number"
      ? [active.selectionStart, active.selectionEnd, active.selectionDirection] : null;
    typed.forEach(function (pair) {
      const twin = twins.get(pair[0]);
      if (twin && changed(pair[1])) twin.value = pair[1].value;
    });
    const open = {};
    root.querySelectorAll("details[data-key]").forEach(function (d) { open[d.dataset.key] = d.open; });
    fresh.querySelectorAll("details[data-key]").forEach(function (d) {
      if (Object.prototype.hasOwnProperty.call(open, d.dataset.key)) d.open = open[d.dataset.key];
    });
    root.replaceChildren.apply(root, Array.prototype.slice.call(fresh.childNodes));
    const moved = anchorKey && twins.get(anchorKey);
    if (moved && moved.isConnected) {
      window.scrollBy(0, moved.getBoundingClientRect().top - anchorTop);
      if (active) {
        moved.focus({ preventScroll: true });
        if (caret) {
          try { moved.setSelectionRange(caret[0], caret[1], caret[2]); } catch (e) { /* no caret here */ }
        }
      }
    }
    root.dataset.updated = String(Date.now());
    pause("");
    return true;
  }

  function refreshAll() {
    // several changes in a burst: one fetch
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      if (composing) {
        pause("composing");  // compositionend asks again
        return;
      }
      const url = root.dataset.reload ? window.location.href : root.dataset.url;
      fetchHtml(url).then(function (html) {
        if (composing) {
          pause("composing");
          return;
        }
        if (root.dataset.reload) {
          const fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-live]");
          if (!fresh) return;
          html = fresh.innerHTML;
        }
        apply(html);
      }).catch(function () {});
    }, 100);
  }

  root.addEventListener("compositionstart", function () { composing = true; });
  root.addEventListener("compositionend", function () {
    composing = false;
    if (pausedFor) refreshAll();
  });
  root.addEventListener("input", function () {  // what was typed is cleared or sent: try again
    if (pausedFor === "changed") refreshAll();
  });

  // The floor: each change is drawn from the stream's data, as _tile.html draws it (same
  // markup, same words from data-labels), instead of fetching the tile's HTML: a hall of
  // 200 tables changes 400 times a second, and every open floor page would ask for each.
  const labels = JSON.parse(root.dataset.labels || "{}");
  const official = root.dataset.official === "1";  // a spectator sees no flag nobody confirmed (public.py)

  function esc(value) {
    return String(value).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function t(key, values) {
    const text = Object.prototype.hasOwnProperty.call(labels, key) ? labels[key] : key;
    return values ? text.replace(/\{(\w+)\}/g, function (_, name) { return values[name]; }) : text;
  }

  function whole(x) {  // Python's "%.0f": halves to even
    const r = Math.round(x);
    return String(Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r);
  }

  function levelWord(level) {  // as messages.level_word
    return level === "A+" ? t("table.level_passed_a") : level === "T" ? "10" : level == null ? "—" : String(level);
  }

  function seatLabel(seat) {
    return seat ? '<span class="seat-name">' + esc(t("seat." + seat)) + "</span>" : "—";
  }

  function clock(c, lastT) {
    const task = Object.prototype.hasOwnProperty.call(labels, "table.clock_task." + c.task)
      ? t("table.clock_task." + c.task) : c.what;  // as _macros.html's clock
    return '<span class="clock-box" title="' + esc(t("table.clock_title", { rule: c.rule, task: task })) +
      '"><span class="clock-label">' + esc(t("table.clock")) + '</span> <span class="clock" data-format="' +
      esc(t("table.clock_s")) + '" data-limit="' + esc(c.limit) + '" data-elapsed="' +
      esc((lastT || c.start) - c.start) + '">' + esc(t("table.clock_s", { s: Math.trunc(c.limit) })) + "</span></span>";
  }

  function status(tile) {
    if (tile.over) {
      return '<div class="status">' + esc(t("floor.finished")) +
        (tile.result ? esc(t("floor.colon")) + esc(tile.result.score.NS) + ":" + esc(tile.result.score.EW) : "") + "</div>";
    }
    if (!tile.deal) return "";
    const turn = tile.phase === "play" && tile.turn;
    let html = '<div class="status">' + esc(t("table.deal_n", { n: tile.deal })) + " · " + esc(t("table.level")) +
      " " + esc(levelWord(tile.level)) + " · " +
      esc(turn ? t("floor.turn", { seat: t("seat." + tile.turn) })
               : t("phase." + (tile.phase == null ? "None" : tile.phase)));  // Jinja writes None
    (tile.clocks || []).forEach(function (c) { if (c.seat === tile.turn) html += " " + clock(c, tile.last_t); });
    html += ' </div> <div class="counts">';
    ["N", "E", "S", "W"].forEach(function (seat) {
      html += '<span class="count' + (seat === tile.turn && tile.phase === "play" ? " turn" : "") + '">' +
        seatLabel(seat) + " " + esc(tile.counts[seat]) + "</span>";
    });
    return html + "</div> ";
  }

  function deviceWord(word) {  // as _macros.html's device_word
    word = String(word);
    if (word.startsWith("fault: ")) return t("floor.device.fault", { what: deviceWord(word.slice(7)) });
    return Object.prototype.hasOwnProperty.call(labels, "floor.device." + word) ? t("floor.device." + word) : word;
  }

  function health(h) {
    if (!h) return '<span class="none">' + esc(t("floor.no_agent")) + "</span>";
    const bad = (h.camera || "ok") !== "ok" || (h.calibration || "ok") !== "ok";
    let html = '<span class="' + (bad ? "bad" : "good") + '">' + esc(t("floor.agent")) + esc(t("floor.colon")) +
      (h.fps !== undefined ? esc(t("floor.fps", { n: whole(h.fps) })) : "") +
      (h.camera ? " · " + esc(t("floor.camera")) + " " + esc(deviceWord(h.camera)) : "") +
      (h.calibration ? " · " + esc(t("floor.calibration")) + " " + esc(deviceWord(h.calibration)) : "") +
      (h.outbox ? " · " + esc(t("floor.outbox", { n: h.outbox })) : "") + "</span> ";
    if (h.perception) {
      html += '<span class="perception">' + esc(t("floor.perception")) + esc(t("floor.colon")) +
        esc(t("floor.perception_counts", h.perception)) + "</span>";
    }
    return html;
  }

  function tileHtml(tile) {
    const open = official ? tile.open_flags || {} : {};
    const severities = Object.keys(open);
    let html = '<a id="tile-' + esc(tile.table) + '" class="tile' +
      (severities.length ? " flagged sev-top-" + esc(severities[0]) : "") + (tile.over ? " over" : "") +
      '" href="/tables/' + esc(encodeURIComponent(tile.table)) + '" data-table="' + esc(tile.table) +
      '" data-seq="' + esc(tile.seq) + '"><div class="tile-head"><span class="tid">' + esc(tile.table) + "</span> ";
    if (severities.length) {
      html += '<span class="flags">' + severities.map(function (s) {
        return '<span class="sev sev-' + esc(s) + '">' + esc(open[s]) + " " + esc(t("severity." + s)) + "</span>";
      }).join("") + "</span>";
    }
    if (official && tile.reviews) {
      html += ' <span class="sev sev-review">' + esc(tile.reviews) + " " + esc(t("floor.to_check")) + "</span>";
    }
    html += " </div> ";
    if (tile.teams && Object.keys(tile.teams).length) {
      html += '<div class="teams"> ' + ["NS", "EW"].map(function (side) {
        return '<div><span class="side">' + esc(t("side." + side)) + "</span> " + esc(tile.teams[side]) +
          ' <span class="lvl">' + esc(t("table.level")) + " " + esc(levelWord(tile.levels[side])) + "</span></div>";
      }).join(" ") + " </div> " + status(tile);
    } else {
      html += '<div class="status">' + esc(t("floor.waiting")) + "</div>";
    }
    return html + ' <div class="health"> ' + health(tile.health) + " </div> </a>";
  }

  function drawTile(tile) {
    const holder = document.createElement("div");
    holder.innerHTML = tileHtml(tile);
    const fresh = holder.firstElementChild;
    const old = document.getElementById("tile-" + tile.table);
    if (old) old.replaceWith(fresh); else root.appendChild(fresh);
    const empty = root.querySelector(".empty");
    if (empty) empty.remove();
    root.dataset.updated = String(Date.now());
  }

  // Each table's tile as this page's stream last sent it: a "table" event brings a whole
  // tile, a "change" event the fields that differ from the one the stream sent before.
  const tiles = {};

  function onTable(message) {
    const data = JSON.parse(message.data);
    if (mode === "floor") {
      tiles[data.table] = message.type === "change" ? Object.assign({}, tiles[data.table], data) : data;
      drawTile(tiles[data.table]);
    } else if (mode === "table") {
      if (data.table === root.dataset.table) refreshAll();
    } else {
      refreshAll();
    }
  }

  const seen = root.dataset.seen || "{}";
  const source = new EventSource("/api/stream?last_event_id=" + encodeURIComponent(seen));
  source.addEventListener("table", onTable);
  source.addEventListener("change", onTable);
  let lost = null;  // a reconnect within two seconds is not worth a word
  source.addEventListener("error", function () {
    if (!lost) lost = setTimeout(function () { offline = true; say(); }, 2000);
  });
  source.addEventListener("open", function () {
    clearTimeout(lost);
    lost = null;
    if (offline) {
      offline = false;
      say();
      if (mode !== "floor") refreshAll();  // what moved while the stream was away
    }
  });
})();
