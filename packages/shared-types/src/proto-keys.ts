/**
 * "__proto__" keys in parsed JSON: JSON.parse makes them own properties, which zod's records
 * silently drop; a file or message holding one is refused instead, naming where.
 */
/** An object or array still to be walked by protoKeyPath, and how it was reached (for the path). */
interface JsonNode {
  readonly value: object;
  readonly key: string | number;
  readonly parent: JsonNode | undefined;
}

/**
 * The path of a "__proto__" key in parsed JSON text, or undefined. JSON.parse keeps such a key
 * as an own property, but zod's z.record drops it without a word (a file would read as
 * something else than it says), and Object.assign would turn it into a prototype: it is
 * refused wherever it is. The key can only be written with these letters or with \u escapes,
 * so text without either is not walked (a 6 MB snapshot: ~2 ms to look, ~10 ms to walk, of ~330 ms).
 */
export function protoKeyPath(text: string, raw: unknown): (string | number)[] | undefined {
  if (!text.includes('__proto__') && !text.includes('\\u')) return undefined;
  if (typeof raw !== 'object' || raw === null) return undefined;
  // Iterative: the nesting depth is the sender's choice, the call stack's is not.
  const stack: JsonNode[] = [{ value: raw, key: '', parent: undefined }];
  const visit = (node: JsonNode, key: string | number, v: unknown): void => {
    if (typeof v === 'object' && v !== null) stack.push({ value: v, key, parent: node });
  };
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const value = node.value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) visit(node, i, value[i]);
      continue;
    }
    for (const k of Object.keys(value)) {
      if (k === '__proto__') {
        const path: (string | number)[] = [k];
        for (let n: JsonNode | undefined = node; n?.parent; n = n.parent) path.push(n.key);
        return path.reverse();
      }
      visit(node, k, (value as Record<string, unknown>)[k]);
    }
  }
  return undefined;
}

/** The refusal of a "__proto__" key at `path`, naming it as describeZodError names fields. */
export function protoKeyError(path: (string | number)[]): { ok: false; message: string; field: string } {
  const field = path.map(String).join('.');
  return { ok: false, message: `${field}: a key named "__proto__" is not allowed`, field };
}
