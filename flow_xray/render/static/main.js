// main.js: read the embedded data and start the viewer it asks for.

FX.main = function () {
  let data;
  try {
    data = FX.readPayload();
  } catch (err) {
    document.body.appendChild(FX.el("p", "fx-empty", "The embedded data could not be read: " + err.message));
    FX.markReady();
    return;
  }
  if (data.mode === "trace") new FX.TraceApp(data);
  else if (data.mode === "graph") new FX.GraphApp(data);
  else FX.textApp(data);
  FX.markReady();
};
