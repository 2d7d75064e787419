// Reloads a live dashboard page (one whose <meta name="tributary-refresh">
// gives a period in seconds) so that a run's progress shows without a
// click. It holds off while the operator edits a form, so that nothing
// typed is lost, and while the tab is hidden. The reload drops a flash
// notice: it was about the action, not about the page.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="tributary-refresh"]');
  var seconds = meta ? parseInt(meta.content, 10) : 0;
  if (!(seconds > 0)) return;
  var edited = false;
  document.addEventListener("input", function () { edited = true; });
  document.addEventListener("change", function () { edited = true; });
  var note = document.querySelector("[data-refresh-note]");
  window.setInterval(function () {
    var field = document.activeElement;
    var busy = edited || (field && /^(INPUT|TEXTAREA|SELECT)$/.test(field.tagName));
    if (note) note.textContent = busy ? "Auto-refresh paused while you edit a form." : note.getAttribute("data-refresh-note");
    if (busy || document.hidden) return;
    var url = new URL(window.location.href);
    if (url.searchParams.has("notice")) {
      url.searchParams.delete("notice");
      url.searchParams.delete("run");
    }
    window.location.replace(url.toString());
  }, seconds * 1000);
})();
