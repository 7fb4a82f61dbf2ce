// mnemogate admin console: asks before a form marked data-confirm is sent (reset, deny, remove).
// Everything works without this script; it only adds the question.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});
