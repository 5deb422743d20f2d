// chat.js -> FX.chat: an LLM call read as a conversation -- one block with the model, the
// request's parameters, tokens and cost, then the turns (system / user / assistant / tool, tool
// calls with their arguments) and the response beside them. The turns come from the page data
// (`chat` on LLM nodes, made on the Python side by flow_xray.llm.messages.chat_view); this file
// only draws them, as text. Long turns start folded with a "Show all" button.
// Public: llmBlock(node), section(panel, node).

FX.chat = (function () {
  const U = FX.util;
  const D = FX.detail;
  const FOLD_CHARS = 500;
  const FOLD_LINES = 10;

  function paramText(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // Model, parameters, tokens and cost of an LLM call, in one block.
  function llmBlock(node) {
    const meta = node.meta && typeof node.meta === "object" ? node.meta : {};
    const chat = node.chat || {};
    const box = U.el("div", "fx-llm-block");
    const model = meta.model !== undefined && meta.model !== null ? meta.model : chat.model;
    const top = U.el("div", "fx-llm-model");
    top.appendChild(U.el("span", "fx-muted", "model "));
    top.appendChild(U.el("b", null, model === undefined || model === null ? "unknown" : String(model)));
    box.appendChild(top);
    const params = chat.params && typeof chat.params === "object" ? chat.params : {};
    const keys = Object.keys(params);
    if (keys.length) {
      const list = U.el("div", "fx-llm-params");
      for (const key of keys) {
        const chip = U.el("span", "fx-param");
        chip.appendChild(U.el("span", "fx-muted", key + " "));
        chip.appendChild(U.el("b", null, paramText(params[key])));
        list.appendChild(chip);
      }
      box.appendChild(list);
    }
    const figures = U.el("div", "fx-llm-figures");
    const figure = function (value, label) {
      const f = U.el("span", "fx-figure");
      f.appendChild(U.el("b", null, value));
      f.appendChild(U.el("span", "fx-muted", " " + label));
      figures.appendChild(f);
    };
    if (U.isNum(meta.prompt_tokens)) figure(U.fmtInt(meta.prompt_tokens), "prompt");
    if (U.isNum(meta.completion_tokens)) figure(U.fmtInt(meta.completion_tokens), "completion");
    if (U.isNum(meta.total_tokens)) figure(U.fmtInt(meta.total_tokens), "total tokens");
    figure(U.isNum(meta.estimated_cost_usd) ? U.fmtCost(meta.estimated_cost_usd) : "\u2014",
      U.isNum(meta.estimated_cost_usd) ? "est. cost" : "cost unknown");
    box.appendChild(figures);
    return box;
  }

  // Text that folds when long: the first lines, then "Show all N characters".
  function foldable(text, cls) {
    text = U.visible(text);
    const pre = U.el("div", cls);
    const lines = text.split("\n");
    const long = text.length > FOLD_CHARS || lines.length > FOLD_LINES;
    if (!long) {
      pre.textContent = text;
      return pre;
    }
    const cut = lines.length > FOLD_LINES ? lines.slice(0, FOLD_LINES).join("\n") : text;
    pre.textContent = cut.slice(0, FOLD_CHARS) + "\u2026";
    const wrap = U.el("div", "fx-fold");
    wrap.appendChild(pre);
    const more = U.el("button", "fx-link fx-show-all", "Show all " + U.fmtInt(text.length) + " characters");
    more.type = "button";
    more.addEventListener("click", function () {
      const open = more.dataset.open === "1";
      pre.textContent = open ? cut.slice(0, FOLD_CHARS) + "\u2026" : text;
      more.dataset.open = open ? "" : "1";
      more.textContent = open ? "Show all " + U.fmtInt(text.length) + " characters" : "Show less";
    });
    wrap.appendChild(more);
    return wrap;
  }

  function prettyArguments(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (e) {
      return text;
    }
  }

  function turnView(turn, response) {
    const role = typeof turn.role === "string" && turn.role ? turn.role : "user";
    const known = ["system", "user", "assistant", "tool", "developer"].indexOf(role) >= 0;
    const el = U.el("div", "fx-turn fx-role-" + (known ? role : "other") + (response ? " fx-response" : ""));
    const head = U.el("div", "fx-turn-head");
    head.appendChild(U.el("span", "fx-role", role));
    if (turn.name) head.appendChild(U.el("span", "fx-muted", turn.name));
    if (turn.tool_call_id) head.appendChild(U.el("span", "fx-muted fx-call-id", "\u21b3 " + turn.tool_call_id));
    el.appendChild(head);
    if (turn.content) el.appendChild(foldable(String(turn.content), "fx-turn-text"));
    for (const call of Array.isArray(turn.tool_calls) ? turn.tool_calls : []) {
      const box = U.el("div", "fx-tool-call");
      const title = U.el("div", "fx-tool-call-head");
      title.appendChild(U.el("span", "fx-muted", "calls "));
      title.appendChild(U.el("b", null, String(call.name)));
      if (call.id) title.appendChild(U.el("span", "fx-muted fx-call-id", " " + call.id));
      box.appendChild(title);
      if (call.arguments) box.appendChild(foldable(prettyArguments(String(call.arguments)), "fx-turn-text fx-mono"));
      el.appendChild(box);
    }
    if (!turn.content && !(turn.tool_calls && turn.tool_calls.length)) {
      el.appendChild(U.el("div", "fx-muted", "(no text)"));
    }
    return el;
  }

  // The LLM block and the conversation, as sections of the detail panel.
  function section(panel, node) {
    const chat = node.chat;
    panel.appendChild(llmBlock(node));
    const messages = Array.isArray(chat.messages) ? chat.messages : [];
    const response = Array.isArray(chat.response) ? chat.response : [];
    const body = U.el("div", "fx-chat");
    const prompt = U.el("div", "fx-chat-prompt");
    for (const turn of messages) prompt.appendChild(turnView(turn, false));
    if (!messages.length) prompt.appendChild(U.el("div", "fx-muted", "no messages recorded"));
    const reply = U.el("div", "fx-chat-reply");
    reply.appendChild(U.el("div", "fx-chat-label", "Response"));
    for (const turn of response) reply.appendChild(turnView(turn, true));
    if (!response.length) reply.appendChild(U.el("div", "fx-muted", node.error ? "no response: the call failed" : "no response recorded"));
    body.appendChild(prompt);
    body.appendChild(reply);
    D.section(panel, "Conversation (" + U.fmtCount(messages.length, "turn", "turns") + ")", body);
  }

  return { llmBlock: llmBlock, section: section };
})();
