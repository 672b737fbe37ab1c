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
      el.textContent = left >= 0 ? left + "s" : "+" + (-left) + "s";
      el.classList.toggle("urgent", left >= 0 && left <= 5);
      el.classList.toggle("overtime", left < 0);
    });
  }
  setInterval(tickClocks, 250);
  tickClocks();

  if (!root || !window.EventSource) return;
  const mode = root.dataset.live;
  let pending = null;

  function fetchHtml(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); });
  }

  // A referee typing a reason or a correction must not lose it to a live refresh:
  // while a form in the live part is being edited, refreshes wait (and a note says so).
  function changed(el) {
    if (el.tagName === "SELECT") {
      return Array.prototype.some.call(el.options, function (o) { return o.selected !== o.defaultSelected; });
    }
    return el.type !== "hidden" && el.value !== el.defaultValue;
  }

  function editing() {
    const active = document.activeElement;
    if (active && root.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) return true;
    return Array.prototype.some.call(root.querySelectorAll("input, select, textarea"), changed);
  }

  function refreshAll() {
    // several changes in a burst: one fetch
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      if (editing()) {
        document.body.classList.add("updates-waiting");
        refreshAll();
        return;
      }
      document.body.classList.remove("updates-waiting");
      const url = root.dataset.reload ? window.location.href : root.dataset.url;
      fetchHtml(url).then(function (html) {
        if (root.dataset.reload) {
          const doc = new DOMParser().parseFromString(html, "text/html");
          const fresh = doc.querySelector("[data-live]");
          if (fresh) root.innerHTML = fresh.innerHTML;
        } else {
          root.innerHTML = html;
        }
        root.dataset.updated = String(Date.now());
      }).catch(function () {});
    }, editing() ? 1000 : 100);
  }

  function onTable(message) {
    const data = JSON.parse(message.data);
    if (mode === "floor") {
      fetchHtml("/floor/tile/" + encodeURIComponent(data.table)).then(function (html) {
        const old = document.getElementById("tile-" + data.table);
        const holder = document.createElement("div");
        holder.innerHTML = html.trim();
        const tile = holder.firstElementChild;
        if (old) old.replaceWith(tile); else root.appendChild(tile);
        const empty = root.querySelector(".empty");
        if (empty) empty.remove();
        root.dataset.updated = String(Date.now());
      }).catch(function () {});
    } else if (mode === "table") {
      if (data.table === root.dataset.table) refreshAll();
    } else {
      refreshAll();
    }
  }

  const seen = root.dataset.seen || "{}";
  const source = new EventSource("/api/stream?last_event_id=" + encodeURIComponent(seen));
  source.addEventListener("table", onTable);
})();
