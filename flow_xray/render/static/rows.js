// rows.js -> FX.rows: a virtualized list -- only the rows in (or near) the viewport exist in the DOM,
// so a tree of 100k calls scrolls as fast as one of 10. Rows are recycled from a pool.
// Public: RowList.

FX.rows = (function () {
  const U = FX.util;

  function RowList(parent, opts) {
    this.opts = opts; // {rowHeight, createRow(), fillRow(el, item, position), onClick(item, event)}
    this.scroller = U.el("div", "fx-rows");
    this.scroller.tabIndex = 0;
    this.spacer = U.el("div", "fx-rows-spacer");
    this.scroller.appendChild(this.spacer);
    parent.appendChild(this.scroller);
    this.items = [];
    this.pool = [];
    const self = this;
    const redraw = U.perFrame(function () { self.render(); });
    this.scroller.addEventListener("scroll", redraw);
    if (window.ResizeObserver) new ResizeObserver(redraw).observe(this.scroller);
    this.scroller.addEventListener("click", function (e) {
      const row = e.target.closest(".fx-row");
      if (row && row._fxItem !== undefined) opts.onClick(row._fxItem, e);
    });
  }

  RowList.prototype.setItems = function (items) {
    this.items = items;
    this.spacer.style.height = items.length * this.opts.rowHeight + "px";
    this.render();
  }

  RowList.prototype.render = function () {
    const h = this.opts.rowHeight;
    const top = this.scroller.scrollTop;
    const height = this.scroller.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / h) - 6);
    const last = Math.min(this.items.length, Math.ceil((top + height) / h) + 6);
    while (this.pool.length < last - first) {
      const row = this.opts.createRow();
      row.classList.add("fx-row");
      this.pool.push(row);
      this.scroller.appendChild(row);
    }
    for (let k = 0; k < this.pool.length; k++) {
      const row = this.pool[k];
      const position = first + k;
      if (position >= last) {
        row.style.display = "none";
        row._fxItem = undefined;
        continue;
      }
      row.style.display = "";
      row.style.transform = "translateY(" + position * h + "px)";
      row._fxItem = this.items[position];
      this.opts.fillRow(row, this.items[position], position);
    }
  }

  // Scroll just enough to show the row at `position` (centre it when it is far away).
  RowList.prototype.reveal = function (position) {
    const h = this.opts.rowHeight;
    const top = this.scroller.scrollTop;
    const height = this.scroller.clientHeight;
    const y = position * h;
    if (y < top) this.scroller.scrollTop = y - (y < top - height ? height / 2 : 0);
    else if (y + h > top + height) {
      this.scroller.scrollTop = y + h - height + (y > top + 2 * height ? height / 2 : 0);
    }
    this.render();
  }

  return { RowList: RowList };
})();
