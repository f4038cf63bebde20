// Pooljudge charts: "Download PNG" next to each chart. The button (hidden until this script runs,
// so a browser without scripts shows only "Download SVG") carries data-chart-png, the URL of the
// chart's SVG as the server draws it for a download, and data-filename. The SVG is fetched, drawn
// into an <img> from a data: URL (the Content-Security-Policy allows data: images, not blob:),
// painted on a white canvas at twice its natural size and saved with canvas.toBlob. Nothing
// leaves the browser; no dependencies.
(function () {
  "use strict";
  var SCALE = 2;

  function size(svgText) {
    var doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
    var svg = doc.documentElement;
    var w = parseFloat(svg.getAttribute("width"));
    var h = parseFloat(svg.getAttribute("height"));
    if (!(w > 0 && h > 0)) {
      var box = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(parseFloat);
      w = box[2] || 760;
      h = box[3] || 420;
    }
    return { width: w, height: h };
  }

  function save(blob, filename) {
    var url = URL.createObjectURL(blob);
    var a = document.createElement("a");
    a.href = url;
    a.download = filename;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
  }

  function fail(button, why) {
    button.disabled = false;
    button.textContent = "Download PNG";
    button.title = "The PNG could not be made (" + why + "): download the SVG instead.";
  }

  function png(button) {
    button.disabled = true;
    button.textContent = "Making the PNG…";
    fetch(button.dataset.chartPng, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (text) {
        var dims = size(text);
        var img = new Image();
        img.onload = function () {
          var canvas = document.createElement("canvas");
          canvas.width = Math.round(dims.width * SCALE);
          canvas.height = Math.round(dims.height * SCALE);
          var ctx = canvas.getContext("2d");
          ctx.fillStyle = "#fff";
          ctx.fillRect(0, 0, canvas.width, canvas.height);
          ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
          canvas.toBlob(function (blob) {
            if (!blob) { fail(button, "the browser made no image"); return; }
            save(blob, button.dataset.filename || "chart.png");
            button.disabled = false;
            button.textContent = "Download PNG";
          }, "image/png");
        };
        img.onerror = function () { fail(button, "the SVG did not load as an image"); };
        img.width = dims.width;
        img.height = dims.height;
        img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
      })
      .catch(function (error) { fail(button, error.message); });
  }

  function ready() {
    document.querySelectorAll("button[data-chart-png]").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () { png(button); });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
