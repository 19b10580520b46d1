// Moved out of curation/papers_upload.html so the Content-Security-Policy allows no inline script.
(function () {
  const zone = document.getElementById("dropzone");
  const input = document.getElementById("upload-files");
  const list = document.getElementById("dropzone-files");
  if (!zone || !input) return;
  function show() {
    list.textContent = Array.from(input.files).map(function (f) { return f.name; }).join(", ");
  }
  ["dragenter", "dragover"].forEach(function (name) {
    zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.add("is-dragging"); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    zone.addEventListener(name, function () { zone.classList.remove("is-dragging"); });
  });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length) { input.files = event.dataTransfer.files; show(); }
  });
  input.addEventListener("change", show);
})();
