// The studio's keyboard and prefetch layer. Loaded once per page via launch(js=...).
// Keys are queued with the candidate on screen when pressed, then click hidden Gradio buttons
// one at a time; each button's `js` hook sends that capture, so the server acts on what the
// curator saw (and refuses a rating if its queue is elsewhere).
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
  // Keys wait in an ordered queue and are sent one at a time. Each key is bound to the
  // candidate on screen when it was pressed (the server's view, or the next one shown at once
  // from the prefetched chain). When the page cannot know what comes next (the chain is used
  // up, or after an undo, a jump or a step to an unknown neighbour), nothing is shown and keys
  // pressed meanwhile stay unbound: each waits for the next candidate to be shown, never the
  // one before. The server refuses a rating for any candidate but the one its queue is at.
  rp.queue = [];      // keys not sent yet, in the order pressed
  rp.inflight = null; // the key whose reply is awaited
  rp.lastDone = null; // the key the latest reply answered
  rp.sent = { cid: null, seen: -1, tier: "", note: "", delta: 0, goto: 0 };
  rp.shown = null;    // {cid, url, seen} on screen now (seen -1: shown ahead of the server); null: waiting
  rp.shownCid = () => (rp.shown ? rp.shown.cid : null);
  const server = () => {
    const v = view();
    if (!v || !v.dataset.cid) return null;
    return { cid: Number(v.dataset.cid), url: v.dataset.url || null, seen: Number(v.dataset.seen || 0) };
  };
  const chain = () => {
    const v = view();
    return ((v && v.dataset.chain) || "").split(" ").filter(Boolean).map((p) => {
      const i = p.indexOf("|"); return { cid: Number(p.slice(0, i)), url: p.slice(i + 1), seen: -1 };
    });
  };
  const nextAfter = (cid) => {  // where a rating of `cid` will advance to, if the page knows
    const c = chain();
    if (cid === rp.cid()) return c[0] || null;
    const at = c.findIndex((x) => x.cid === cid);
    return at >= 0 ? c[at + 1] || null : null;
  };
  const neighbour = (cid, delta) => {
    const v = view(), name = delta > 0 ? "fwd" : "back";
    if (!v || cid !== rp.cid() || !v.dataset[name + "Cid"]) return null;
    return { cid: Number(v.dataset[name + "Cid"]), url: v.dataset[name + "Url"], seen: -1 };
  };
  // What is on screen once key `e` (bound to `e.cid`) has been applied; null: unknown.
  const after = (e) => {
    if (e.kind === "rate") return nextAfter(e.cid);
    if (e.kind === "nav") return neighbour(e.cid, e.delta);
    if (e.kind === "note") return { cid: e.cid, url: e.url, seen: -1 };
    return null;  // undo, jump: the server decides
  };
  // Bind waiting keys, in order, to the candidates they will meet, starting from the server's
  // view; returns what the screen shows after every queued key (null: waiting).
  const plan = () => {
    let cur = server();
    let before = !rp.inflight && rp.lastDone && rp.lastDone.kind === "rate" ? rp.lastDone.cid : null;
    const seq = rp.inflight ? [rp.inflight, ...rp.queue] : rp.queue;
    for (let i = 0; i < seq.length; i++) {
      const e = seq[i];
      if (e.needsCid && e.cid == null) {
        if (!cur) return null;  // still waiting for the next candidate
        if (cur.cid === before) {  // no new candidate came: these keys apply to none
          const dropped = seq.length - i;
          rp.queue = rp.queue.slice(0, rp.queue.length - dropped);
          say(`${dropped} key${dropped > 1 ? "s" : ""} pressed after #${cur.cid} ${dropped > 1 ? "were" : "was"} not applied: no next candidate was shown for ${dropped > 1 ? "them" : "it"}.`, "warn");
          return cur;
        }
        e.cid = cur.cid; e.seen = cur.seen; e.url = cur.url;
      }
      before = e.kind === "rate" ? e.cid : null;
      cur = e.needsCid ? after(e) : null;
    }
    return cur;
  };
  const display = (cur) => {
    const v = view(), im = $("rp-img");
    if (!v) return null;
    v.classList.remove("rp-optimistic", "rp-waiting");
    const s = server();
    const isImg = im && im.tagName === "IMG";
    if (cur && s && cur.cid === s.cid) {
      if (isImg && s.url && im.getAttribute("src") !== s.url) im.src = s.url;
      if (im) im.dataset.cid = String(s.cid);
      return cur;
    }
    if (cur && cur.url && isImg) {
      im.src = cur.url;
      im.dataset.cid = String(cur.cid);
      v.classList.add("rp-optimistic");
      return cur;
    }
    if (im) im.dataset.cid = "";  // nothing the curator could rate is on screen
    v.classList.add("rp-waiting");
    return null;
  };
  const refresh = () => { rp.shown = display(plan()); rp.pump(); };
  const noteBox = () => document.querySelector("#rp-note textarea, #rp-note input");
  const takeNote = () => {
    // The note goes with this key; empty the box now so a later key does not send it again
    // (the server puts it back if the save fails).
    const box = noteBox();
    const text = box ? box.value : "";
    if (box && text) { box.value = ""; box.dispatchEvent(new Event("input", { bubbles: true })); }
    return text;
  };
  const say = (text, level = "info") => {
    const msg = view() && view().querySelector(".rp-msg");
    if (msg) { msg.className = `rp-msg rp-${level}`; msg.textContent = text; }
  };
  rp.pump = () => {
    if (rp.busy || !rp.queue.length) return;
    const e = rp.queue[0];
    if (e.needsCid && e.cid == null) {
      if (server()) return;  // waits for its candidate (plan binds it when one is shown)
      const dropped = rp.queue.length;  // nothing to rate here: the keys apply to none
      rp.queue = [];
      say(`Nothing to rate here (${dropped} key${dropped > 1 ? "s" : ""} not applied).`, "warn");
      return;
    }
    rp.queue.shift();
    const b = btn(e.id);
    if (!b) { rp.pump(); return; }
    rp.inflight = rp.sent = e;
    rp.busy = true;
    rp.busyAt = performance.now();
    b.click();
  };
  // A key: bound now to what is on screen (null while waiting), then the screen moves on.
  rp.push = (entry) => {
    if (entry.needsCid && rp.shown) {
      entry.cid = rp.shown.cid; entry.seen = rp.shown.seen; entry.url = rp.shown.url;
    }
    rp.queue.push(entry);
    refresh();
  };
  rp.act = (tier) => {
    rp.push({ id: "rp-rate-btn", kind: "rate", needsCid: true, cid: null, seen: -1, tier, note: takeNote() });
    const e = rp.queue[rp.queue.length - 1] || rp.inflight;
    say(e && e.cid != null ? `Saving ${tier} for #${e.cid}…` : `${tier}: waiting for the next painting…`);
  };
  rp.undo = () => rp.push({ id: "rp-undo-btn", kind: "undo" });
  rp.nav = (delta) => rp.push({ id: "rp-nav-btn", kind: "nav", needsCid: true, cid: null, delta });
  rp.jump = (cid) => rp.push({ id: "rp-goto-btn", kind: "goto", goto: cid });
  rp.saveNote = () => rp.push({ id: "rp-note-btn", kind: "note", needsCid: true, cid: null, note: takeNote() });
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
    fit();
    rp.lastDone = rp.inflight;
    rp.inflight = null;
    rp.busy = false;
    const urls = (v.dataset.prefetch || "").split(" ").filter(Boolean);
    if (urls.length) rp.preload(urls);
    if (v.dataset.level === "error" || v.dataset.error) {
      // the reply says what went wrong (or that the key was refused): keys pressed after it
      // were meant for what would have come next, so they are dropped, and the view says so
      const dropped = rp.queue.length;
      rp.queue = [];
      rp.shown = server();
      if (dropped) {
        const msg = v.querySelector(".rp-msg");
        if (msg) msg.textContent += ` (${dropped} key${dropped > 1 ? "s" : ""} pressed after it ${dropped > 1 ? "were" : "was"} not applied)`;
      }
      return;
    }
    refresh();
  };
  const onGrid = () => {
    const g = $("rp-grid");
    if (!g || g.dataset.seen === "1") return;
    g.dataset.seen = "1";
    rp.sel.clear();
    rp.lastTile = null;
  };
  // Size the painting to the height left below its top (at most its own 600 px), so it and
  // its photo show whole without scrolling, filters open or not (see studio.css --rp-fit).
  const fit = () => {
    const main = view() && view().querySelector(".rp-main");
    if (!main || !visible(main)) return;
    const top = main.getBoundingClientRect().top + window.scrollY;
    const px = Math.max(160, Math.min(600, Math.floor(window.innerHeight - top - 12)));
    const root = document.documentElement;
    if (root.style.getPropertyValue("--rp-fit") !== `${px}px`) root.style.setProperty("--rp-fit", `${px}px`);
  };
  window.addEventListener("resize", fit);
  new ResizeObserver(fit).observe(document.body);  // the filters opening, a tab shown
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
