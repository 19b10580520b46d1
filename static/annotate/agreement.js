// Keyboard shortcuts of double annotation: on the copy page Ctrl+Enter submits and Alt+S saves; in round one
// Alt+1 keeps the first version, Alt+2 the second, Alt+3 merges as marked.
(function () {
  "use strict";
  function click(id) {
    var button = document.getElementById(id);
    if (button) { button.click(); return true; }
    return false;
  }
  document.addEventListener("keydown", function (event) {
    var done = false;
    if (event.ctrlKey && event.key === "Enter") done = click("submit-copy");
    else if (event.altKey && (event.key === "s" || event.key === "S")) done = click("save-copy");
    else if (event.altKey && event.key === "1") done = click("keep-first");
    else if (event.altKey && event.key === "2") done = click("keep-second");
    else if (event.altKey && event.key === "3") done = click("keep-merge");
    if (done) event.preventDefault();
  });
})();
