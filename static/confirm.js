// A form marked `data-confirm="Question?"` asks that question before it is sent, and stays unsent unless the person
// agrees: the one way pages ask before a destructive action such as removing a member (no inline script: CSP).
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
