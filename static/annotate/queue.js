// Moved out of annotate/work/queue.html so the Content-Security-Policy allows no inline script.
document.addEventListener("keydown", (e) => {
  if (e.key === "n" && !["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) {
    document.getElementById("next-button").click();
  }
});
