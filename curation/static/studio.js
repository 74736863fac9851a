// The studio's keyboard and prefetch layer. Loaded once per page via launch(js=...).
// Keys click hidden Gradio buttons; each button's `js` hook reads what is on screen
// (candidate id, the rating row we saw) so the server acts on exactly what the curator saw.
() => {
  if (window.rp) return;
  const rp = (window.rp = { busy: false, pending: null, tier: "", delta: 0, goto: 0,
                             nonce: null, sel: new Set(), lastTile: null, preloaded: [] });
  const $ = (id) => document.getElementById(id);
  const btn = (id) => { const el = $(id); return el && (el.tagName === "BUTTON" ? el : el.querySelector("button")); };
  const view = () => $("rp-view");
  const visible = (el) => !!el && el.offsetParent !== null;

  rp.cid = () => { const v = view(); return v && v.dataset.cid ? Number(v.dataset.cid) : null; };
  rp.seen = () => { const v = view(); return v ? Number(v.dataset.seen || 0) : 0; };
  // What the next request acts on, captured at keypress time (before any optimistic swap).
  rp.sent = { cid: null, seen: 0 };
  rp.fire = (id, setup) => {
    // One action in flight at a time; one more is remembered and runs when the view updates,
    // so fast typing never rates the same candidate twice.
    if (rp.busy) { rp.pending = [id, setup]; return; }
    setup && setup();
    const b = btn(id);
    if (!b) return;
    rp.sent = { cid: rp.cid(), seen: rp.seen() };
    rp.busy = true;
    rp.busyAt = performance.now();
    b.click();
    return true;
  };
  rp.optimistic = (tier, which = "next") => {
    // Show the prefetched next render at once; the server's reply (sent only after the
    // rating is committed) then replaces the whole view and confirms with "Saved ...".
    const v = view();
    const im = document.getElementById("rp-img");
    const cid = v && v.dataset[which + "Cid"], url = v && v.dataset[which + "Url"];
    if (!im || im.tagName !== "IMG" || !cid || !url) return;
    rp.expect = Number(cid);
    im.src = url;
    im.dataset.cid = cid;
    v.classList.add("rp-optimistic");
    const msg = v.querySelector(".rp-msg");
    if (msg && tier) { msg.className = "rp-msg rp-info"; msg.textContent = `Saving ${tier} for #${v.dataset.cid}…`; }
  };
  rp.act = (tier) => {
    if (rp.busy) { rp.fire("rp-rate-btn", () => { rp.tier = tier; }); return; }
    if (rp.fire("rp-rate-btn", () => { rp.tier = tier; })) rp.optimistic(tier);
  };
  rp.undo = () => rp.fire("rp-undo-btn");
  rp.nav = (delta) => {
    const setup = () => { rp.delta = delta; };
    if (rp.busy) { rp.fire("rp-nav-btn", setup); return; }
    if (rp.fire("rp-nav-btn", setup)) rp.optimistic("", delta > 0 ? "fwd" : "back");
  };
  rp.jump = (cid) => rp.fire("rp-goto-btn", () => { rp.goto = cid; });
  rp.saveNote = () => rp.fire("rp-note-btn");
  rp.gridRate = (tier) => { rp.tier = tier; const b = btn("rp-grid-rate-btn"); b && b.click(); };
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
    // A key pressed during an optimistic swap was meant for the predicted candidate; if the
    // server shows another one (e.g. another tab rated it), drop it rather than misapply it.
    if (rp.pending && rp.expect != null && rp.cid() !== rp.expect) rp.pending = null;
    rp.expect = null;
    const urls = (v.dataset.prefetch || "").split(" ").filter(Boolean);
    if (urls.length) rp.preload(urls);
    if (rp.pending) {
      const [id, setup] = rp.pending;
      rp.pending = null;
      if (id === "rp-rate-btn") { setup(); rp.act(rp.tier); } else rp.fire(id, setup);
    }
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
  setInterval(() => { if (rp.busy && performance.now() - rp.busyAt > 8000) rp.busy = false; }, 1000);

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
    else if (k === "1") rp.act("love");
    else if (k === "2") rp.act("okay");
    else if (k === "3") rp.act("reject");
    else if (k === "4" || k === " ") rp.act("skip");
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

  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("[data-rp-act],[data-rp-goto],[data-rp-grid],.rp-tile");
    if (!a) return;
    if (a.dataset.rpAct) { e.preventDefault(); rp[a.dataset.rpAct === "undo" ? "undo" : "act"](a.dataset.rpAct); }
    else if (a.dataset.rpGoto) { e.preventDefault(); rp.jump(Number(a.dataset.rpGoto)); }
    else if (a.dataset.rpGrid) {
      e.preventDefault();
      const g = a.dataset.rpGrid;
      if (g === "all") document.querySelectorAll(".rp-tile").forEach((t) => { rp.sel.add(Number(t.dataset.cid)); t.classList.add("rp-sel"); });
      else if (g === "none") { rp.sel.clear(); document.querySelectorAll(".rp-tile").forEach((t) => t.classList.remove("rp-sel")); }
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
