// A side panel (.ws-form) sticks beside the page's context and scrolls on its own. Until the page is scrolled to where
// it sticks, it is made shorter by its distance from there (--below-sticky, which app.css reads), so that its foot,
// with Submit, is on screen from the start; and while fields lie below what it shows, it is marked `data-more-below`
// and a note at its foot says so (gone at its end). Runs again on a scroll, a resize and a change of what it holds.
(function () {
  var panels = document.querySelectorAll(".ws-form");
  function fit() {
    panels.forEach(function (panel) {
      var style = getComputedStyle(panel);
      var below = style.position === "sticky" ? Math.max(0, panel.getBoundingClientRect().top - parseFloat(style.top)) : 0;
      panel.style.setProperty("--below-sticky", below + "px");
      panel.toggleAttribute("data-more-below", panel.scrollTop + panel.clientHeight < panel.scrollHeight - 2);
    });
  }
  var observer = window.ResizeObserver ? new ResizeObserver(fit) : null;
  panels.forEach(function (panel) {
    var note = document.createElement("p");
    note.className = "more-below";
    note.setAttribute("aria-hidden", "true");  // a reader of the page reads on to what is below
    note.textContent = "More below ↓";
    panel.append(note);
    panel.addEventListener("scroll", fit, { passive: true });
    if (observer) Array.prototype.forEach.call(panel.children, function (child) { observer.observe(child); });
  });
  if (!panels.length) return;
  window.addEventListener("scroll", fit, { passive: true });
  window.addEventListener("resize", fit);
  fit();
})();
