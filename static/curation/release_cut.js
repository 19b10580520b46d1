// The cut form: ticking a batch or typing batch numbers chooses "Only these batches" (no inline script: CSP).
(function () {
  const form = document.getElementById("cut-batches");
  if (!form) return;
  const chosen = form.querySelector("input[name=scope][value=chosen]");
  if (!chosen) return;
  form.querySelectorAll("input[name=batch_ids]").forEach(function (box) {
    box.addEventListener("change", function () { if (box.checked) chosen.checked = true; });
  });
  const typed = form.querySelector("input[name=batch_range]");
  typed.addEventListener("input", function () { if (typed.value.trim()) chosen.checked = true; });
})();
