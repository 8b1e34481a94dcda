// The globals a codemode script sees, installed before it runs. Called once with the bridge (a host function
// that sends a message to pi) and the tool, global and store tables as JSON. Returns the control function the
// worker calls: control("run", fn), control("settle", id, ok, payload), control("stalled").
(function (bridge, toolsJson, globalsJson, storeJson) {
  "use strict";
  // Internal names carry a prefix, so their frames can be left out of the stacks the model reads.
  const run = codemode_prelude_run, settle = codemode_prelude_settle, stalled = codemode_prelude_stalled, output = codemode_prelude_output, imageUrl = codemode_prelude_imageUrl, checkKey = codemode_prelude_checkKey, outputText = codemode_prelude_outputText, text = codemode_prelude_text, image = codemode_prelude_image, store = codemode_prelude_store, load = codemode_prelude_load, exit = codemode_prelude_exit, caller = codemode_prelude_caller, finish = codemode_prelude_finish;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const promiseThen = Promise.prototype.then;
  const waiting = new Map();
  let lastId = 0;
  let settled = false;
  const EXIT = Object.freeze({});

  function codemode_prelude_finish(ok, payload, writes) {
    if (settled) return;
    settled = true;
    bridge("done", ok, payload, writes);
  }

  // "Name: message" and the stack frames, as the model reads a thrown error.
  function errorText(error) {
    const head = error.message ? error.name + ": " + error.message : String(error.name);
    const frames = typeof error.stack === "string"
      ? error.stack.split("\n").filter((line) => line.trim() && !line.includes("codemode_prelude_"))
      : [];
    return [head, ...frames].join("\n").split("<input>:").join("codemode.js:");
  }

  function format(value) {
    if (typeof value === "string") return value;
    if (value instanceof ErrorCtor) return errorText(value);
    if (typeof value === "number") return String(value);  // NaN and Infinity, which JSON would make null
    try {
      const json = stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  }

  function describeError(error) {
    try {
      if (error instanceof ErrorCtor) {
        return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
      }
      return stringify({ message: String(format(error)) });
    } catch {
      return stringify({ message: "The script threw a value that cannot be described" });
    }
  }

  function codemode_prelude_caller(kind, name, spread) {
    return (...args) => new Promise((resolve, reject) => {
      let json;
      try {
        const value = spread ? args : args[0];
        json = value === undefined ? undefined : stringify(value);
      } catch (error) {
        reject(error);
        return;
      }
      const id = ++lastId;
      waiting.set(id, { resolve, reject });
      bridge("call", id, kind, name, json);
    });
  }

  const tools = Object.create(null);
  const allTools = [];
  for (const { name, jsName, description } of parse(toolsJson)) {
    const fn = caller("tool", name, false);
    if (!(jsName in tools)) {  // the first of two names that map to one identifier wins
      tools[jsName] = fn;
      allTools.push(Object.freeze({ name: jsName, description }));
    }
    if (!(name in tools)) tools[name] = fn;
  }
  Object.freeze(tools);
  Object.freeze(allTools);

  // A member that does not exist throws naming the close matches, instead of a later "is not a function".
  const comparable = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");
  function guard(target, label, names, hint) {
    return new Proxy(target, {
      get: function codemode_prelude_get(object, property, receiver) {
        if (typeof property !== "string" || property in object || property in Object.prototype
            || property === "then" || property === "toJSON") {
          return Reflect.get(object, property, receiver);
        }
        const wanted = comparable(property);
        const exact = names.filter((name) => comparable(name) === wanted);
        const close = exact.length > 0 ? exact : names.filter(
          (name) => wanted && (comparable(name).includes(wanted) || wanted.includes(comparable(name))));
        let message = label + "." + property + " does not exist.";
        if (close.length > 0) message += " Did you mean " + close.slice(0, 5).map((name) => label + "." + name).join(", ") + "?";
        else if (names.length <= 20) message += " Available: " + names.join(", ") + ".";
        if (hint) message += " " + hint;
        message += ' Check for a member with "' + property + '" in ' + label + ".";
        throw new TypeErrorCtor(message);
      },
    });
  }
  const toolsProxy = guard(tools, "tools", allTools.map((tool) => tool.name),
    "ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.");

  const namespaces = new Map();
  for (const { name, spread } of parse(globalsJson)) {
    const fn = caller("global", name, spread);
    const dot = name.indexOf(".");
    if (dot === -1) {
      Object.defineProperty(globalThis, name, { value: fn, enumerable: true });
      continue;
    }
    const namespace = name.slice(0, dot);
    if (!namespaces.has(namespace)) namespaces.set(namespace, Object.create(null));
    namespaces.get(namespace)[name.slice(dot + 1)] = fn;
  }
  for (const [namespace, members] of namespaces) {
    Object.freeze(members);
    Object.defineProperty(globalThis, namespace, { value: guard(members, namespace, Object.keys(members)), enumerable: true });
  }

  // store: key -> JSON text; sizes count the key and its JSON.
  const stored = new Map(Object.entries(parse(storeJson)));
  const writes = new Map();
  let storedChars = 0;
  for (const [key, json] of stored) storedChars += key.length + json.length;
  const STORE_HINT = "store() is for small state such as IDs or summaries. Show images with image(), keep large "
    + "data in variables, or write it to a file with a tool.";

  function codemode_prelude_checkKey(fn, key) {
    if (typeof key !== "string") throw new TypeErrorCtor(fn + "() key must be a string");
  }

  function codemode_prelude_store(key, value) {
    checkKey("store", key);
    const before = stored.has(key) ? key.length + stored.get(key).length : 0;
    if (value === undefined) {
      stored.delete(key);
      storedChars -= before;
      writes.set(key, undefined);
      return;
    }
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      throw new TypeErrorCtor("store(" + stringify(key) + ") value is not JSON-serializable: " + format(error));
    }
    if (json === undefined) throw new TypeErrorCtor("store(" + stringify(key) + ") value is not JSON-serializable");
    if (json.length > 262144) {
      throw new RangeErrorCtor("store(" + stringify(key) + ") value has " + json.length
        + " characters of JSON, more than the limit of 262144. " + STORE_HINT);
    }
    const after = storedChars - before + key.length + json.length;
    if (after > 1048576) {
      throw new RangeErrorCtor("store is full: stored values would exceed 1048576 characters of JSON. "
        + "Delete keys with store(key, undefined). " + STORE_HINT);
    }
    stored.set(key, json);
    storedChars = after;
    writes.set(key, json);
  }

  function codemode_prelude_load(key) {
    checkKey("load", key);
    const json = stored.get(key);
    return json === undefined ? undefined : parse(json);
  }

  function writesJson() {
    const entries = [];
    for (const [key, json] of writes) entries.push(json === undefined ? [key] : [key, json]);
    return stringify(entries);
  }

  let outputChars = 0;
  let outputCalls = 0;
  function codemode_prelude_output(kind, data, mimeType) {
    if (settled) return;
    outputChars += data.length;
    outputCalls++;
    if (outputChars > 16777216 || outputCalls > 100000) {
      const error = new RangeErrorCtor("script output exceeded the limit of 16777216 characters or 100000 text(), "
        + "image(), and console calls. Print a summary instead, or write large data to a file with a tool.");
      finish(false, describeError(error));
      throw error;
    }
    bridge("output", kind, data, mimeType);
  }

  function codemode_prelude_outputText(value) {
    if (value === undefined || value === null || (typeof value !== "object" && typeof value !== "function")) {
      return String(value);
    }
    const json = stringify(value);
    return json === undefined ? String(value) : json;
  }

  function codemode_prelude_text(value) {
    let rendered;
    try {
      rendered = outputText(value);
    } catch (error) {
      throw new TypeErrorCtor(error instanceof ErrorCtor ? error.message : String(error));
    }
    output("text", rendered);
  }

  const IMAGE_EXPECTS = 'image expects a non-empty image URL string, an object with image_url, or an image block '
    + '{ type: "image", data, mimeType }';
  function codemode_prelude_imageUrl(value) {
    if (typeof value === "string") return value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeErrorCtor(IMAGE_EXPECTS);
    if (value.image_url !== undefined) {
      if (typeof value.image_url !== "string") throw new TypeErrorCtor(IMAGE_EXPECTS);
      return value.image_url;
    }
    if (typeof value.type !== "string") throw new TypeErrorCtor(IMAGE_EXPECTS);
    if (value.type !== "image") throw new TypeErrorCtor('image only accepts image blocks, got "' + value.type + '"');
    if (typeof value.data !== "string" || value.data === "") throw new TypeErrorCtor("image expected image block data");
    if (value.data.toLowerCase().startsWith("data:")) return value.data;
    return "data:;base64," + value.data;
  }

  // The base64 of each accepted format's signature (bytes from offset 0, so their encodings are prefixes).
  const SIGNATURES = [
    ["image/png", /^iVBORw0KGg/],
    ["image/jpeg", /^[/]9j[/](?!9)/],
    ["image/gif", /^R0lGOD[dl]h/],
    ["image/webp", /^UklG.{8}RUJQ/],
  ];
  function codemode_prelude_image(value) {
    const url = imageUrl(value);
    if (url === "") throw new TypeErrorCtor(IMAGE_EXPECTS);
    const colon = url.indexOf(":");
    const scheme = colon === -1 ? "" : url.slice(0, colon).toLowerCase();
    if (scheme === "http" || scheme === "https") {
      throw new TypeErrorCtor("remote image URLs are not supported in tool outputs. Pass a base64 data URI instead");
    }
    const comma = url.indexOf(",");
    const header = comma === -1 ? [] : url.slice(colon + 1, comma).split(";");
    if (scheme !== "data" || comma === -1 || header.slice(1).every((part) => part.toLowerCase() !== "base64")) {
      throw new TypeErrorCtor("invalid image output. Pass a base64 data URI instead");
    }
    const data = url.slice(comma + 1).replace(/\s+/g, "");
    if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
      throw new TypeErrorCtor("invalid image output. The image data is not valid base64 (truncated or corrupted?)");
    }
    const found = SIGNATURES.find(([, pattern]) => pattern.test(data.slice(0, 16)));
    if (!found) throw new TypeErrorCtor("invalid image output. The image data is not a PNG, JPEG, GIF, or WebP image");
    output("image", data, found[0]);
  }

  function codemode_prelude_exit() {
    finish(true, undefined, writesJson());
    throw EXIT;
  }

  const console = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    console[level] = (...args) => output("console", args.map(format).join(" "));
  }
  Object.freeze(console);

  const define = (name, value) => Object.defineProperty(globalThis, name, { value, enumerable: true });
  define("tools", toolsProxy);
  define("ALL_TOOLS", allTools);
  define("console", console);
  define("text", text);
  define("image", image);
  define("exit", exit);
  define("store", store);
  define("load", load);

  function codemode_prelude_settle(id, ok, payload) {
    const entry = waiting.get(id);
    if (!entry) return;
    waiting.delete(id);
    if (!ok) {
      entry.reject(new ErrorCtor(payload));
      return;
    }
    let value;
    try {
      value = payload === undefined || payload === null ? undefined : parse(payload);
    } catch (error) {
      entry.reject(error);
      return;
    }
    entry.resolve(value);
  }

  function codemode_prelude_run(fn) {
    let promise;
    try {
      promise = fn();
    } catch (error) {
      if (error !== EXIT) finish(false, describeError(error));
      return;
    }
    promiseThen.call(promise, (value) => {
      let json;
      try {
        json = value === undefined ? undefined : stringify(value);
      } catch (error) {
        finish(false, describeError(error));
        return;
      }
      finish(true, json, writesJson());
    }, (error) => {
      if (error !== EXIT) finish(false, describeError(error));
    });
  }

  // Nothing can wake a script that waits while no call is pending: there are no timers.
  function codemode_prelude_stalled() {
    if (settled || waiting.size > 0) return settled;
    finish(false, stringify({ name: "Error", message: "The script is waiting on a promise that can never settle: "
      + "no tool call is pending, and timers do not exist here." }));
    return true;
  }

  return function codemode_prelude_control(op, a, b, c) {
    if (op === "run") return run(a);
    if (op === "settle") return settle(a, b, c);
    if (op === "stalled") return stalled();
    if (op === "settled") return settled;
    return undefined;
  };
})
