// Moved out of annotate/instances/browser.html so the Content-Security-Policy allows no inline script.
document.getElementById("select-all")?.addEventListener("change", (e) => {
  document.querySelectorAll("#instance-table input[name=instances]").forEach((box) => { box.checked = e.target.checked; });
});
