// Moved out of curation/paper.html so the Content-Security-Policy allows no inline script.
(function () {
  function tableBox(id) { return document.getElementById("table-" + id); }
  function mark(id, on) {
    const box = tableBox(id);
    if (box) box.classList.toggle("is-target", on);
    document.querySelectorAll('.mention[data-table="' + id + '"]').forEach(function (m) { m.classList.toggle("is-active", on); });
  }
  document.querySelectorAll(".mention[data-table]").forEach(function (m) {
    const id = m.dataset.table;
    m.addEventListener("mouseenter", function () { mark(id, true); });
    m.addEventListener("mouseleave", function () { mark(id, false); });
    m.addEventListener("focus", function () { mark(id, true); });
    m.addEventListener("blur", function () { mark(id, false); });
    m.addEventListener("click", function (event) {
      const box = tableBox(id);
      if (!box) return;
      event.preventDefault();
      box.scrollIntoView({ behavior: "smooth", block: "center" });
      box.classList.remove("flash"); void box.offsetWidth; box.classList.add("flash");
      history.replaceState(null, "", "#table-" + id);
    });
  });
  document.querySelectorAll(".backlink[data-paragraph]").forEach(function (b) {
    const p = document.getElementById("paragraph-" + b.dataset.paragraph);
    b.addEventListener("mouseenter", function () { if (p) p.classList.add("is-target"); });
    b.addEventListener("mouseleave", function () { if (p) p.classList.remove("is-target"); });
  });
})();
