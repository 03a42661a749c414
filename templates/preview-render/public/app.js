// The preview page: picks a composition, builds its variables form from the schema the server
// reads out of the composition (GET /api/compositions/:name), shows every change live in
// <svc-player>, and renders with POST /api/render — polling GET /api/render/:id when the server
// answers {call_id} (async mode), or taking the URL from the answer itself (sync mode).

const $ = (id) => document.getElementById(id);
const player = $("player");
const form = $("render-form");
const renderButton = $("render");
const POLL_MS = 1000;
const PREVIEW_DEBOUNCE_MS = 250;

let current; // the composition shown: {name, variables, ...}
let previewTimer;
// Compositions usually animate in from nothing, so frame 0 is often empty: a newly loaded one is
// shown at a representative moment (40% in, where the engine cuts its thumbnail) instead.
let showRepresentativeFrame = false;

function showPageMessage(text) {
  $("page-message").textContent = text;
  $("page-message").hidden = !text;
}

/** `progress`: 0..1, undefined for "unknown yet", null for no bar; `tone` "error" for failures. */
function setStatus(text, progress, tone) {
  $("status").hidden = !text;
  $("status").dataset.tone = tone ?? "";
  $("status-text").textContent = text ?? "";
  const bar = $("progress");
  if (progress === undefined) bar.removeAttribute("value");
  else bar.value = progress;
  bar.hidden = progress === null;
}

async function getJson(url, init) {
  const response = await fetch(url, init);
  let body;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body };
}

function errorText(body, status) {
  const error = body?.error;
  return error ? `${error.message} (${error.code})` : `The server answered HTTP ${status}.`;
}

// ---- the variables form ----

function fieldFor(variable) {
  const id = `var-${variable.id}`;
  const wrapper = document.createElement("div");
  wrapper.className = `field field-${variable.type}`;
  wrapper.dataset.variable = variable.id;
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = variable.label;
  let input;
  if (variable.type === "enum") {
    input = document.createElement("select");
    for (const option of variable.options ?? []) {
      input.append(
        new Option(option.label, option.value, false, option.value === variable.default),
      );
    }
  } else {
    input = document.createElement("input");
    if (variable.type === "boolean") {
      input.type = "checkbox";
      input.checked = variable.default === true;
    } else if (variable.type === "number") {
      input.type = "number";
      for (const key of ["min", "max", "step"]) {
        if (variable[key] !== undefined) input[key] = String(variable[key]);
      }
      if (variable.step === undefined) input.step = "any";
      if (typeof variable.default === "number") input.value = String(variable.default);
    } else if (variable.type === "color") {
      input.type = "color";
      input.value = toInputColor(variable.default);
    } else {
      input.type = "text";
      if (variable.maxLength !== undefined) input.maxLength = variable.maxLength;
      if (typeof variable.default === "string") input.value = variable.default;
    }
  }
  input.id = id;
  input.name = variable.id;
  if (variable.type === "boolean") {
    wrapper.classList.add("inline");
    wrapper.append(input, label);
  } else {
    wrapper.append(label, input);
  }
  if (variable.description) {
    const help = document.createElement("small");
    help.textContent = variable.description;
    wrapper.append(help);
  }
  const problem = document.createElement("small");
  problem.className = "problem";
  problem.hidden = true;
  wrapper.append(problem);
  input.addEventListener("input", schedulePreview);
  input.addEventListener("change", schedulePreview);
  return wrapper;
}

/** <input type=color> takes only #rrggbb. */
function toInputColor(value) {
  if (typeof value !== "string") return "#000000";
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])[0-9a-f]?$/i.exec(value);
  if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`;
  const long = /^#([0-9a-f]{6})(?:[0-9a-f]{2})?$/i.exec(value);
  return long ? `#${long[1]}` : "#000000";
}

function variableValues() {
  const values = {};
  for (const variable of current?.variables ?? []) {
    const input = form.elements.namedItem(variable.id);
    if (!input) continue;
    if (variable.type === "boolean") values[variable.id] = input.checked;
    else if (variable.type === "number") {
      if (input.value.trim() !== "") values[variable.id] = Number(input.value);
    } else values[variable.id] = input.value;
  }
  return values;
}

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => {
    player.variables = variableValues();
  }, PREVIEW_DEBOUNCE_MS);
}

function showIssues(issues) {
  for (const field of document.querySelectorAll(".field")) {
    const problem = field.querySelector(".problem");
    const issue = issues.find((candidate) => candidate.id === field.dataset.variable);
    problem.hidden = !issue;
    problem.textContent = issue ? `${variableLabel(issue.id)} ${issue.message}` : "";
    field.classList.toggle("invalid", Boolean(issue));
  }
}

function variableLabel(id) {
  return current?.variables.find((variable) => variable.id === id)?.label ?? id;
}

// ---- compositions ----

async function loadComposition(name) {
  const { status, body } = await getJson(`/api/compositions/${encodeURIComponent(name)}`);
  if (status !== 200) {
    showPageMessage(errorText(body, status));
    return;
  }
  current = body;
  showPageMessage("");
  const box = $("variables");
  box.replaceChildren(...body.variables.map(fieldFor));
  $("variables-empty").textContent = "This composition declares no variables.";
  $("variables-empty").hidden = body.variables.length > 0;
  const errors = $("schema-errors");
  errors.replaceChildren(
    ...body.schema_errors.map((text) =>
      Object.assign(document.createElement("li"), { textContent: text }),
    ),
  );
  errors.hidden = body.schema_errors.length === 0;
  const length = body.duration === null ? "length from its timeline" : `${body.duration} s`;
  $("meta").textContent = `${body.name} · ${body.width}×${body.height} · ${length}`;
  showRepresentativeFrame = true;
  player.variables = variableValues();
  player.setAttribute("src", body.url);
  renderButton.disabled = false;
}

async function start() {
  const { status, body } = await getJson("/api/compositions");
  if (status !== 200) {
    showPageMessage(`The compositions could not be listed: ${errorText(body, status)}`);
    $("variables-empty").textContent = "No composition to show.";
    return;
  }
  // The server needs its token to render (RENDER_API_TOKEN); kept for this tab only.
  $("token-field").hidden = !body.render_token_required;
  $("token").value = sessionStorage.getItem("svc-render-token") ?? "";
  $("token").addEventListener("change", () =>
    sessionStorage.setItem("svc-render-token", $("token").value.trim()),
  );
  if (body.compositions.length === 0) {
    showPageMessage(
      "There are no compositions yet: add a folder with an index.html to the compositions folder and reload.",
    );
    $("variables-empty").textContent = "No composition to show.";
    player.hidden = true;
    return;
  }
  const select = $("composition");
  select.replaceChildren(
    ...body.compositions.map((name) => new Option(name, name, false, name === body.default)),
  );
  $("picker").hidden = body.compositions.length < 2;
  select.addEventListener("change", () => void loadComposition(select.value));
  await loadComposition(body.default ?? body.compositions[0]);
}

// ---- rendering ----

function renderRequest() {
  const data = new FormData(form);
  return {
    composition: current.name,
    variables: variableValues(),
    format: data.get("format"),
    resolution: data.get("resolution"),
    quality: data.get("quality"),
    fps: Number(data.get("fps")),
  };
}

function showVideo(url) {
  $("result").hidden = false;
  const video = $("video");
  // A GIF is a picture and a PNG sequence a zip of frames: only the download link fits those.
  const picture = /\.(gif|zip)$/.test(url);
  video.hidden = picture;
  $("gif").hidden = !url.endsWith(".gif");
  if (url.endsWith(".gif")) $("gif").src = url;
  $("download").href = url;
  $("download").textContent = `Download ${url.split("/").pop()}`;
  if (picture) return;
  // Like the preview, show a representative frame until it is played, then play from the start.
  video.addEventListener("loadedmetadata", () => (video.currentTime = video.duration * 0.4), {
    once: true,
  });
  video.addEventListener("play", () => (video.currentTime = 0), { once: true });
  video.src = url;
}

async function waitForResult(callId) {
  for (;;) {
    const { status, body } = await getJson(`/api/render/${encodeURIComponent(callId)}`);
    if (status === 202) {
      const percent = Math.round((body.progress ?? 0) * 100);
      const eta = body.eta_seconds === undefined ? "" : ` · about ${body.eta_seconds} s left`;
      setStatus(`Rendering… ${percent}%${eta}`, body.progress ?? 0);
    } else if (status === 200) {
      return body;
    } else {
      return {
        status: "failed",
        error: body?.error ?? { code: `http_${status}`, message: errorText(body, status) },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function render(event) {
  event.preventDefault();
  if (!current) return;
  renderButton.disabled = true;
  showIssues([]);
  $("result").hidden = true;
  setStatus("Starting the render…", undefined);
  try {
    const answer = await getJson("/api/render", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...($("token").value.trim() ? { authorization: `Bearer ${$("token").value.trim()}` } : {}),
      },
      body: JSON.stringify(renderRequest()),
    });
    let result;
    if (answer.status === 202) result = await waitForResult(answer.body.call_id);
    else if (answer.body?.status)
      result = answer.body; // sync mode: done or failed
    else {
      if (answer.body?.error?.issues) showIssues(answer.body.error.issues);
      const retry = answer.headers.get("retry-after");
      setStatus(
        `${errorText(answer.body, answer.status)}${retry ? ` Retry in ${retry} s.` : ""}`,
        null,
        "error",
      );
      return;
    }
    if (result.status === "done") {
      setStatus("Done.", 1);
      showVideo(result.url);
    } else {
      setStatus(`The render failed: ${result.error.message} (${result.error.code})`, null, "error");
    }
  } catch (error) {
    setStatus(`The server could not be reached: ${error.message}`, null, "error");
  } finally {
    renderButton.disabled = false;
  }
}

form.addEventListener("submit", (event) => void render(event));
player.addEventListener("ready", () => {
  if (!showRepresentativeFrame) return;
  showRepresentativeFrame = false;
  if (player.paused && player.currentTime === 0) void player.seek(player.duration * 0.4);
});
player.addEventListener("error", (event) =>
  showPageMessage(`The preview failed: ${event.detail.message}`),
);
void start();
