// Layout check (tests/browser/test_layout.py): for every visible control of <main>, scroll it into view and ask
// what the browser finds at its centre, whether it has a label (and its placeholder fits) and (a button) the app's style; a box that hides its overflow must contain it; the page must not scroll sideways;
// a data table wider than its box scrolls in a box that shows it, header row and first column kept in view.
async () => {
  // The page loaded, then two frames: what its scripts do on load and on a resize (tables.js marking wide tables)
  // has run.
  if (document.readyState !== "complete") await new Promise(done => addEventListener("load", done, {once: true}));
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) problems.push(`page scrolls sideways: ${doc.scrollWidth} > ${doc.clientWidth}`);
  // A data table wider than its box must scroll inside a box that shows it does (tables.js marks it
  // `data-scrolls` and writes a hint), with its header row and first column kept in view (sticky); the box itself
  // must fit its pane.
  for (const table of document.querySelectorAll("main table.data")) {
    if (table.closest("dialog:not([open]), details:not([open]), [hidden]")) continue;
    const tableBox = table.getBoundingClientRect();
    if (tableBox.width === 0) continue;
    const tname = `table ${(table.closest("[id]") || {}).id || ""} "${(table.caption ? table.caption.innerText : "").slice(0, 30)}"`;
    let box = null;
    for (let a = table.parentElement; a && a !== doc; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (["auto", "scroll", "hidden", "clip"].includes(s.overflowX)) { box = a; break; }
    }
    const pane = table.closest(".ws-context, .ws-form, .card, section, main");
    if (box && pane && pane.contains(box) && box.getBoundingClientRect().right > pane.getBoundingClientRect().right + 1) {
      problems.push(`${tname}: its box is wider than its pane`);
    }
    if (table.scrollWidth <= (box ? box.clientWidth : pane.clientWidth) + 1) continue;  // it fits
    if (!box || !["auto", "scroll"].includes(getComputedStyle(box).overflowX)) {
      problems.push(`${tname} is wider than its pane and does not scroll inside a box`); continue;
    }
    if (!box.hasAttribute("data-scrolls")) problems.push(`${tname} scrolls sideways without showing that it does`);
    const head = table.querySelector("thead th");
    if (head && getComputedStyle(head).position !== "sticky") problems.push(`${tname}: its header row scrolls away`);
    const first = table.querySelector("tbody tr > :first-child");
    if (first && getComputedStyle(first).position !== "sticky") problems.push(`${tname}: its first column scrolls away`);
  }
  const pen = document.createElement("canvas").getContext("2d");  // measures placeholders' text
  const controls = document.querySelectorAll("main input:not([type=hidden]), main select, main textarea, main button");
  for (const el of controls) {
    const style = getComputedStyle(el);
    if (el.closest("dialog:not([open]), details:not([open]) > :not(summary), [hidden]")) continue;
    if (style.display === "none" || style.visibility === "hidden") continue;
    const box0 = el.getBoundingClientRect();
    if (box0.width === 0 && box0.height === 0) continue;
    const name = `${el.tagName.toLowerCase()}[name=${el.name || ""}]#${el.id || ""} "${(el.innerText || el.value || "").slice(0, 30)}"`;
    // A box that hides its overflow cannot be scrolled by a person: the control must lie inside it.
    let clipped = null;
    for (let a = el.parentElement; a && a !== doc; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (![s.overflowX, s.overflowY].some(v => v === "hidden" || v === "clip")) continue;
      const r = a.getBoundingClientRect();
      if (box0.left < r.left - 1 || box0.right > r.right + 1 || box0.top < r.top - 1 || box0.bottom > r.bottom + 1) {
        clipped = `${a.tagName.toLowerCase()}.${a.className}`; break;
      }
    }
    if (clipped) { problems.push(`${name} is cut off by ${clipped}`); continue; }
    const named = el.tagName === "BUTTON" || ["submit", "button", "reset"].includes(el.type)
      || (el.labels && el.labels.length) || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") || el.title;
    if (!named) problems.push(`${name} has no label`);
    // A placeholder is an example a person reads whole: cut off at the box's edge, it says something else.
    if (el.placeholder && !el.value) {
      pen.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (el.tagName === "INPUT" && pen.measureText(el.placeholder).width > room + 1) {
        problems.push(`${name}: its placeholder "${el.placeholder}" is cut off`);
      }
    }
    // A button the browser draws itself (Chromium's ButtonFace grey, outset border): app.css styles every button.
    if ((el.tagName === "BUTTON" || ["submit", "button", "reset"].includes(el.type))
        && (style.borderTopStyle === "outset" || style.backgroundColor === "rgb(239, 239, 239)")) {
      problems.push(`${name} has the browser's default button style`);
    }
    el.scrollIntoView({block: "center", inline: "center"});
    const box = el.getBoundingClientRect();
    if (box.width < 8 || box.height < 8) { problems.push(`${name} is ${box.width}x${box.height} px`); continue; }
    const x = box.left + box.width / 2, y = box.top + box.height / 2;
    if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) { problems.push(`${name} cannot be scrolled into view`); continue; }
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === el || el.contains(hit) || (hit.tagName === "LABEL" && hit.control === el))) {
      problems.push(`${name} is covered by ${hit ? hit.tagName.toLowerCase() + "." + hit.className : "nothing"}`);
    }
  }
  window.scrollTo(0, 0);
  return problems;
}