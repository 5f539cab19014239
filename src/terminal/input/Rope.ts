/**
 * Text as a persistent balanced tree of small chunks (a rope), for the line
 * editor: joining two ropes, splitting one, and adding text at either end cost
 * O(log n) plus the chunk touched, never a copy of the whole text. Each node
 * knows its length in UTF-16 code units and in code points; a chunk never cuts
 * a surrogate pair. Pure: every operation returns a new rope and shares the rest.
 */

/** Code units per chunk: an edit copies at most this much text. */
export const CHUNK = 512

interface Leaf {
  readonly text: string
  readonly units: number
  readonly points: number
  readonly height: 0
}

interface Branch {
  readonly left: Leaf | Branch
  readonly right: Leaf | Branch
  readonly units: number
  readonly points: number
  readonly height: number
}

/** A rope; `undefined` is the empty text. */
export type Rope = Leaf | Branch | undefined

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff

const countPoints = (text: string): number => {
  let count = text.length
  for (let i = 0; i + 1 < text.length; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      count--
      i++
    }
  }
  return count
}

const leaf = (text: string): Rope => (text.length === 0 ? undefined : { text, units: text.length, points: countPoints(text), height: 0 })

const height = (rope: Rope): number => rope?.height ?? -1
/** Levels of the tree (0 for one chunk): at most about 1.44 log2 of the number of chunks, by the balance kept. */
export const depth = (rope: Rope): number => Math.max(0, height(rope))
export const units = (rope: Rope): number => rope?.units ?? 0
export const points = (rope: Rope): number => rope?.points ?? 0

const branch = (left: Rope, right: Rope): Rope => {
  if (left === undefined) return right
  if (right === undefined) return left
  return {
    left,
    right,
    units: left.units + right.units,
    points: left.points + right.points,
    height: Math.max(left.height, right.height) + 1
  }
}

const isBranch = (rope: Rope): rope is Branch => rope !== undefined && "left" in rope
const isLeaf = (rope: Rope): rope is Leaf => rope !== undefined && "text" in rope

/** `left` then `right`, rebalanced when their heights differ by two (the AVL single and double rotations). */
const balanced = (left: Rope, right: Rope): Rope => {
  if (height(left) > height(right) + 1 && isBranch(left)) {
    if (height(left.left) >= height(left.right)) return branch(left.left, branch(left.right, right))
    const inner = left.right
    if (isBranch(inner)) return branch(branch(left.left, inner.left), branch(inner.right, right))
  }
  if (height(right) > height(left) + 1 && isBranch(right)) {
    if (height(right.right) >= height(right.left)) return branch(branch(left, right.left), right.right)
    const inner = right.left
    if (isBranch(inner)) return branch(branch(left, inner.left), branch(inner.right, right.right))
  }
  return branch(left, right)
}

/** `left` then `right`: O(the difference of their heights). */
export const concat = (left: Rope, right: Rope): Rope => {
  if (left === undefined) return right
  if (right === undefined) return left
  if (height(left) > height(right) + 1 && isBranch(left)) return balanced(left.left, concat(left.right, right))
  if (height(right) > height(left) + 1 && isBranch(right)) return balanced(concat(left, right.left), right.right)
  return branch(left, right)
}

/** `text` cut into chunks, never between the halves of a surrogate pair. */
const pieces = (text: string): Array<string> => {
  const out: Array<string> = []
  let from = 0
  while (from < text.length) {
    let to = Math.min(text.length, from + CHUNK)
    if (to < text.length && isLow(text.charCodeAt(to)) && isHigh(text.charCodeAt(to - 1))) to--
    out.push(text.slice(from, to))
    from = to
  }
  return out
}

/** A balanced rope of `parts` (already chunk-sized). */
const build = (parts: ReadonlyArray<string>, from: number, to: number): Rope => {
  if (to - from === 1) return leaf(parts[from] ?? "")
  if (to <= from) return undefined
  const middle = (from + to) >>> 1
  return branch(build(parts, from, middle), build(parts, middle, to))
}

/** A rope of `text`: O(its length). */
export const of = (text: string): Rope => {
  const parts = pieces(text)
  return build(parts, 0, parts.length)
}

const lastLeaf = (rope: Rope): Rope => (isBranch(rope) ? lastLeaf(rope.right) : rope)
const firstLeaf = (rope: Rope): Rope => (isBranch(rope) ? firstLeaf(rope.left) : rope)
/** `rope` with its last (first) chunk replaced by `text`: the path to it is copied, heights are unchanged. */
const withLast = (rope: Rope, text: string): Rope => (isBranch(rope) ? branch(rope.left, withLast(rope.right, text)) : leaf(text))
const withFirst = (rope: Rope, text: string): Rope => (isBranch(rope) ? branch(withFirst(rope.left, text), rope.right) : leaf(text))

/** `rope` with `text` added at its end; a small text joins the last chunk when it fits. */
export const append = (rope: Rope, text: string): Rope => {
  if (text.length === 0) return rope
  const last = lastLeaf(rope)
  return isLeaf(last) && last.units + text.length <= CHUNK ? withLast(rope, last.text + text) : concat(rope, of(text))
}

/** `rope` with `text` added at its start; a small text joins the first chunk when it fits. */
export const prepend = (rope: Rope, text: string): Rope => {
  if (text.length === 0) return rope
  const first = firstLeaf(rope)
  return isLeaf(first) && first.units + text.length <= CHUNK ? withFirst(rope, text + first.text) : concat(of(text), rope)
}

/** The first `at` code units and the rest (`at` must not cut a surrogate pair). */
export const split = (rope: Rope, at: number): readonly [Rope, Rope] => {
  if (rope === undefined || at <= 0) return [undefined, rope]
  if (at >= rope.units) return [rope, undefined]
  if (isLeaf(rope)) return [leaf(rope.text.slice(0, at)), leaf(rope.text.slice(at))]
  if (at < rope.left.units) {
    const [head, tail] = split(rope.left, at)
    return [head, concat(tail, rope.right)]
  }
  const [head, tail] = split(rope.right, at - rope.left.units)
  return [concat(rope.left, head), tail]
}

/** The chunks in reading order (or from the end back, `backward`), lazily: visiting k of them costs O(log n + k). */
export function* chunks(rope: Rope, backward = false): Generator<string> {
  const stack: Array<Rope> = [rope]
  while (stack.length > 0) {
    const top = stack.pop()
    if (top === undefined) continue
    if (isLeaf(top)) yield top.text
    else if (backward) stack.push(top.left, top.right)
    else stack.push(top.right, top.left)
  }
}

/** The text, whole. */
export const text = (rope: Rope): string => Array.from(chunks(rope)).join("")

/** The last code point and the rope without it ("" when empty). */
export const takeLast = (rope: Rope): readonly [string, Rope] => {
  const last = lastLeaf(rope)
  if (!isLeaf(last)) return ["", rope]
  const cut = last.text.length >= 2 && isLow(last.text.charCodeAt(last.text.length - 1)) && isHigh(last.text.charCodeAt(last.text.length - 2))
    ? 2
    : 1
  const [rest, ch] = split(rope, units(rope) - cut)
  return [text(ch), rest]
}

/** The first code point and the rope without it ("" when empty). */
export const takeFirst = (rope: Rope): readonly [string, Rope] => {
  const first = firstLeaf(rope)
  if (!isLeaf(first)) return ["", rope]
  const cut = first.text.length >= 2 && isHigh(first.text.charCodeAt(0)) && isLow(first.text.charCodeAt(1)) ? 2 : 1
  const [ch, rest] = split(rope, cut)
  return [text(ch), rest]
}
