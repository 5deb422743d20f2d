// main.js -> FX.main: read the embedded data and start the viewer it asks for.
// Public: main() -- called once by the page (render/page.py) after every file has loaded.

FX.main = (function () {
  const U = FX.util;

  function start(data) {
    if (data.mode === "trace") new FX.TraceApp(data);
    else if (data.mode === "graph") new FX.graphApp.GraphApp(data);
    else FX.graphApp.textApp(data);
    U.markReady();
  }

  function fail(err) {
    document.body.appendChild(U.el("p", "fx-empty", "The embedded data could not be read: " + err.message));
    U.markReady();
  }

  function main() {
    FX.payload.read().then(start, fail);
  }

  return main;
})();
