// The studio's keyboard and prefetch layer. Loaded once per page via launch(js=...).
// Keys are queued with what was on screen when pressed, then click hidden Gradio buttons one
// at a time; each button's `js` hook sends that capture, so the server acts on what the
// curator saw.
() => {
  if (window.rp) return;
  const rp = (window.rp = { busy: false, nonce: null, sel: new Set(), lastTile: null,
                             preloaded: [], gridTier: "" });
  const $ = (id) => document.getElementById(id);
  const btn = (id) => { const el = $(id); return el && (el.tagName === "BUTTON" ? el : el.querySelector("button")); };
  const view = () => $("rp-view");
  const visible = (el) => !!el && el.offsetParent !== null;

  rp.cid = () => { const v = view(); return v && v.dataset.cid ? Number(v.dataset.cid) : null; };
  rp.seen = () => { const v = view(); return v ? Number(v.dataset.seen || 0) : 0; };
  // Keys are queued and sent one at a time, in order. Each entry carries what was on screen
  // when its key was pressed (the candidate, possibly one shown optimistically), so a burst
  // of keys rates each candidate the curator saw, and none is lost or doubled.
  rp.queue = [];
  rp.sent = { cid: null, seen: -1, tier: "", note: "", delta: 0, goto: 0 };
  rp.display = null;  // {cid, url} shown optimistically ahead of the server
  rp.shownCid = () => (rp.display ? rp.display.cid : rp.cid());
  const chain = () => {
    const v = view();
    return ((v && v.dataset.chain) || "").split(" ").filter(Boolean).map((p) => {
      const i = p.indexOf("|"); return { cid: Number(p.slice(0, i)), url: p.slice(i + 1) };
    });
  };
  const show = (target) => {
    const v = view(), im = $("rp-img");
    if (!v || !im || im.tagName !== "IMG" || !target) return false;
    im.src = target.url;
    im.dataset.cid = String(target.cid);
    v.classList.add("rp-optimistic");
    return true;
  };
  const noteBox = () => document.querySelector("#rp-note textarea, #rp-note input");
  const takeNote = () => {
    // The note goes with this key; empty the box now so a later key does not send it again
    // (the server puts it back if the save fails).
    const box = noteBox();
    const text = box ? box.value : "";
    if (box && text) { box.value = ""; box.dispatchEvent(new Event("input", { bubbles: true })); }
    return text;
  };
  const status = (text) => {
    const msg = view() && view().querySelector(".rp-msg");
    if (msg) { msg.className = "rp-msg rp-info"; msg.textContent = text; }
  };
  rp.pump = () => {
    if (rp.busy || !rp.queue.length) return;
    const e = rp.queue.shift();
    const b = btn(e.id);
    if (!b) { rp.pump(); return; }
    rp.sent = e;
    rp.busy = true;
    rp.busyAt = performance.now();
    b.click();
  };
  rp.push = (entry) => { rp.queue.push(entry); rp.pump(); };
  rp.act = (tier) => {
    const cid = rp.shownCid();
    if (cid == null) { rp.push({ id: "rp-rate-btn", cid: null, seen: -1, tier, note: "" }); return; }
    const seen = rp.display ? -1 : rp.seen();
    rp.push({ id: "rp-rate-btn", cid, seen, tier, note: takeNote() });
    // show the next unrated render at once (prefetched); the server's reply confirms
    const c = chain(), at = c.findIndex((x) => x.cid === cid);
    const next = rp.display ? (at >= 0 ? c[at + 1] : null) : c[0];
    if (next && show(next)) rp.display = next;
    status(`Saving ${tier} for #${cid}…`);
  };
  rp.undo = () => { rp.display = null; rp.push({ id: "rp-undo-btn" }); };
  rp.nav = (delta) => {
    const v = view();
    const target = !rp.display && v && v.dataset[(delta > 0 ? "fwd" : "back") + "Cid"]
      ? { cid: Number(v.dataset[(delta > 0 ? "fwd" : "back") + "Cid"]), url: v.dataset[(delta > 0 ? "fwd" : "back") + "Url"] }
      : null;
    rp.push({ id: "rp-nav-btn", cid: rp.shownCid(), delta });
    rp.display = target && show(target) ? target : null;
  };
  rp.jump = (cid) => { rp.display = null; rp.push({ id: "rp-goto-btn", goto: cid }); };
  rp.saveNote = () => rp.push({ id: "rp-note-btn", cid: rp.shownCid(), note: takeNote() });
  rp.gridRate = (tier) => { rp.gridTier = tier; const b = btn("rp-grid-rate-btn"); b && b.click(); };
  rp.gridUndo = () => { const b = btn("rp-grid-undo-btn"); b && b.click(); };
  rp.selected = () => Array.from(rp.sel).join(",");

  rp.preload = (urls) => {
    // Keep references so the decoded images stay in the memory cache.
    rp.preloaded = urls.map((u) => {
      const im = new Image();
      im.src = u;
      im.decode().catch(() => {});  // decode now, off the keypress path
      return im;
    });
  };
  const onView = () => {
    const v = view();
    if (!v || v.dataset.nonce === rp.nonce) return;
    rp.nonce = v.dataset.nonce;
    rp.busy = false;
    const urls = (v.dataset.prefetch || "").split(" ").filter(Boolean);
    if (urls.length) rp.preload(urls);
    if (v.dataset.level === "error" || v.dataset.error) {
      // the reply says what went wrong: keys pressed after the failed one are dropped
      // (they were meant for what would have come next), and the view says so
      const dropped = rp.queue.length;
      rp.queue = [];
      rp.display = null;
      if (dropped) {
        const msg = v.querySelector(".rp-msg");
        if (msg) msg.textContent += ` (${dropped} key${dropped > 1 ? "s" : ""} pressed after it ${dropped > 1 ? "were" : "was"} not applied)`;
      }
      return;
    }
    if (!rp.queue.length) rp.display = null;  // the server has caught up: its view is the truth
    else if (rp.display) show(rp.display);  // keep showing what the queued keys were meant for
    rp.pump();
  };
  const onGrid = () => {
    const g = $("rp-grid");
    if (!g || g.dataset.seen === "1") return;
    g.dataset.seen = "1";
    rp.sel.clear();
    rp.lastTile = null;
  };
  new MutationObserver(() => { onView(); onGrid(); }).observe(document.body, { childList: true, subtree: true });
  // A lost response (network hiccup) must not freeze the keyboard forever.
  setInterval(() => { if (rp.busy && performance.now() - rp.busyAt > 8000) { rp.busy = false; rp.pump(); } }, 1000);

  // The rating keys come from the page's rate bar (curation/ui.py), so the tiers are named once.
  const rateKey = (k) => Array.from(document.querySelectorAll("[data-rp-key]"))
    .find((b) => b.dataset.rpKey.split(" ").includes(k === " " ? "space" : k));
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
    const noteBox = t && t.closest && t.closest("#rp-note");
    if (typing) {
      if (noteBox && e.key === "Enter" && !e.shiftKey) { e.preventDefault(); t.blur(); rp.saveNote(); }
      else if (noteBox && e.key === "Escape") { t.blur(); }
      return;
    }
    if (!visible(view()) || e.altKey || e.metaKey) return;
    const k = e.key.toLowerCase();
    const ctrl = e.ctrlKey;
    let handled = true;
    if (ctrl && k === "z") rp.undo();
    else if (ctrl) handled = false;
    else if (rateKey(k)) rp.act(rateKey(k).dataset.rpAct);
    else if (k === "z") rp.undo();
    else if (k === "n") { const box = document.querySelector("#rp-note textarea, #rp-note input"); box && box.focus(); }
    else if (k === "arrowright" || k === "j") rp.nav(1);
    else if (k === "arrowleft" || k === "k") rp.nav(-1);
    else handled = false;
    if (handled) e.preventDefault();
  });

  // Keep ?curator= in the address bar in step with the name box, so a reload resumes as them.
  document.addEventListener("change", (e) => {
    const box = e.target.closest && e.target.closest("#rp-curator");
    if (!box || !e.target.value) return;
    const u = new URL(location.href);
    u.searchParams.set("curator", e.target.value.trim());
    history.replaceState(null, "", u);
  });

  // Our buttons never take focus: Enter after clicking one must not press it again.
  document.addEventListener("mousedown", (e) => {
    if (e.target.closest && e.target.closest("[data-rp-act],[data-rp-grid]")) e.preventDefault();
  });

  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("[data-rp-act],[data-rp-goto],[data-rp-grid],.rp-tile");
    if (!a) return;
    a.blur();  // so a later Enter does not press it again
    if (a.dataset.rpAct) { e.preventDefault(); rp[a.dataset.rpAct === "undo" ? "undo" : "act"](a.dataset.rpAct); }
    else if (a.dataset.rpGoto) { e.preventDefault(); rp.jump(Number(a.dataset.rpGoto)); }
    else if (a.dataset.rpGrid) {
      e.preventDefault();
      const g = a.dataset.rpGrid;
      if (g === "all") document.querySelectorAll(".rp-tile").forEach((t) => { rp.sel.add(Number(t.dataset.cid)); t.classList.add("rp-sel"); });
      else if (g === "none") { rp.sel.clear(); document.querySelectorAll(".rp-tile").forEach((t) => t.classList.remove("rp-sel")); }
      else if (g === "undo") rp.gridUndo();
      else rp.gridRate(g);
    } else {
      // a grid tile: toggle, or shift-click to select a range
      const tiles = Array.from(document.querySelectorAll(".rp-tile"));
      const i = tiles.indexOf(a);
      const range = e.shiftKey && rp.lastTile !== null ? tiles.slice(Math.min(i, rp.lastTile), Math.max(i, rp.lastTile) + 1) : [a];
      const on = !a.classList.contains("rp-sel");
      range.forEach((t) => { t.classList.toggle("rp-sel", on); on ? rp.sel.add(Number(t.dataset.cid)) : rp.sel.delete(Number(t.dataset.cid)); });
      rp.lastTile = i;
    }
  });
}
