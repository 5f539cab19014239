/**
 * Checks a request body against the JSON Schema of OpenAI's `POST /responses`
 * (test/fixtures/openapi/responses-create.schema.json, extracted from the official
 * OpenAPI spec by scripts/extract-responses-schema.mjs; its `$comment` names the
 * commit). Whether a body is valid is decided by the fixture exactly as extracted.
 *
 * Only to explain a failure, a second validator reads each union of items tagged by
 * `type` (input items, content parts, tools...) as OpenAPI's discriminator means it:
 * only the forms for the item's own `type` are tried, so a `function_call_output`
 * missing its `output` reads as that, not as thirty lines from every other kind; and
 * of the three forms of a `message`, those it plainly is not (an output message
 * with input_text parts) are left out.
 */
import * as Fs from "node:fs"
import { Ajv2020, type ErrorObject, type SchemaObject, type ValidateFunction } from "ajv/dist/2020.js"

const FIXTURE = new URL("../fixtures/openapi/responses-create.schema.json", import.meta.url)

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

interface Fixture {
  readonly schema: SchemaObject
  readonly defs: JsonObject
}

const load = (): Fixture => {
  const schema: unknown = JSON.parse(Fs.readFileSync(FIXTURE, "utf8"))
  const defs = isObject(schema) ? schema["$defs"] : undefined
  if (!isObject(schema) || !isObject(defs)) throw new Error(`${FIXTURE.pathname}: not a schema with $defs`)
  return { schema, defs }
}

/** `explain`: every error, with the data it is about; otherwise the first error is enough. */
const compile = (schema: SchemaObject, explain: boolean): ValidateFunction =>
  new Ajv2020({
    // Unknown keywords fail the compile: the extraction converted every OpenAPI-ism.
    strictSchema: true,
    // The spec requires properties it defines only in other branches, and leaves `type` to unions.
    strictRequired: false,
    strictTypes: false,
    strictTuples: false,
    // `format` is an annotation in 2020-12; the spec's are `uri` and OpenAPI's `float`.
    validateFormats: false,
    allErrors: explain,
    verbose: explain
  }).compile(schema)

// ---------------------------------------------------------------------------
// The explaining schema. Each anyOf whose branches are all objects tagged by
// `type` becomes, per tag t, `if type is t then anyOf(the forms for t)`, plus the
// list of known tags; it accepts what the anyOf accepts, only its errors differ.
// Each form is wrapped as `{ if: false, else: form }`, whose failure ends that
// form's errors in ajv's list, so the forms a value is plainly not (a tag of theirs
// refused, deeper down) can be left out of the explanation.

type Tags = { readonly values: ReadonlySet<string | null>; readonly absent: boolean }

const tagValues = (schema: unknown): ReadonlyArray<string | null> | undefined => {
  if (!isObject(schema)) return undefined
  if (typeof schema["const"] === "string") return [schema["const"]]
  const values = schema["enum"]
  if (Array.isArray(values) && values.every((value) => typeof value === "string")) return values
  const branches = schema["anyOf"]
  if (!Array.isArray(branches)) return undefined
  const all: Array<string | null> = []
  for (const branch of branches) {
    const some = isObject(branch) && branch["type"] === "null" ? [null] : tagValues(branch)
    if (some === undefined) return undefined
    all.push(...some)
  }
  return all
}

interface Explaining {
  readonly schema: SchemaObject
  /** The `{ if: false, else: form }` wrappers. */
  readonly forms: WeakSet<object>
  /** The `{ anyOf: forms }` of each tag. */
  readonly unions: WeakSet<object>
  /** The `{ enum: known tags }` checks. */
  readonly tagChecks: WeakSet<object>
}

const explaining = ({ defs, schema }: Fixture): Explaining => {
  const forms = new WeakSet<object>()
  const unions = new WeakSet<object>()
  const tagChecks = new WeakSet<object>()

  /** The `type` values a branch accepts (null: a null tag), and whether it accepts none; undefined: not a tagged object. */
  const tagsOf = (branch: unknown, depth = 0): Tags | undefined => {
    if (!isObject(branch) || depth > 8) return undefined
    const ref = branch["$ref"]
    if (typeof ref === "string") return tagsOf(defs[ref.slice("#/$defs/".length)], depth + 1)
    const branches = branch["anyOf"]
    if (Array.isArray(branches)) {
      const each = branches.map((inner) => tagsOf(inner, depth + 1))
      const present = each.filter((tags): tags is Tags => tags !== undefined)
      if (present.length < each.length) return undefined
      return { values: new Set(present.flatMap((tags) => [...tags.values])), absent: present.some((tags) => tags.absent) }
    }
    const properties = branch["properties"]
    const values = isObject(properties) ? tagValues(properties["type"]) : undefined
    if (values === undefined) return undefined
    const required = branch["required"]
    return { values: new Set(values), absent: !(Array.isArray(required) && required.includes("type")) }
  }

  /** The routes replacing `anyOf: branches` (`walked`: the same branches, rewritten), or undefined to keep it. */
  const route = (branches: ReadonlyArray<unknown>, walked: ReadonlyArray<unknown>): ReadonlyArray<unknown> | undefined => {
    const tags = branches.map((branch) => tagsOf(branch))
    if (branches.length < 2 || tags.some((tag) => tag === undefined)) return undefined
    const union = (test: (tags: Tags) => boolean) => {
      const chosen = walked.filter((_, index) => test(tags[index]!))
      // No form takes an item without a tag: then the tag is what is missing.
      if (chosen.length === 0) return { required: ["type"] }
      const wrapped = chosen.map((form) => {
        const wrapper = { if: false, else: form }
        forms.add(wrapper)
        return wrapper
      })
      const then = { anyOf: wrapped }
      unions.add(then)
      return then
    }
    const known = [...new Set(tags.flatMap((tag) => [...tag!.values]))]
    const tagCheck = { enum: known }
    tagChecks.add(tagCheck)
    return [
      ...known.map((value) => ({
        if: { type: "object", required: ["type"], properties: { type: value === null ? { type: "null" } : { const: value } } },
        then: union((tags) => tags.values.has(value))
      })),
      { if: { type: "object", not: { required: ["type"] } }, then: union((tags) => tags.absent) },
      { properties: { type: tagCheck } },
      // Not an object: no tag to go by.
      { if: { not: { type: "object" } }, then: { anyOf: walked } }
    ]
  }

  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk)
    if (!isObject(node)) return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) out[key] = walk(value)
    const branches = node["anyOf"]
    const walked = out["anyOf"]
    const routes = Array.isArray(branches) && Array.isArray(walked) ? route(branches, walked) : undefined
    if (routes === undefined) return out
    delete out["anyOf"]
    const allOf = out["allOf"]
    out["allOf"] = [...(Array.isArray(allOf) ? allOf : []), ...routes]
    return out
  }
  const rewritten = { ...schema, $defs: Object.fromEntries(Object.entries(defs).map(([name, def]) => [name, walk(def)])) }
  return { schema: rewritten, forms, unions, tagChecks }
}

const isObjectIn = (set: WeakSet<object>, value: unknown): boolean => typeof value === "object" && value !== null && set.has(value)

const within = (path: string, place: string): boolean => path === place || path.startsWith(`${place}/`)

/**
 * Ajv's errors with, at each union of forms, only the errors of the forms whose
 * tags all matched (a user message is not an output message whose parts are
 * input_text), when there are any. A union's errors come just before its anyOf
 * error, each form's closed by its wrapper's `if` error.
 */
const prune = (explaining: Explaining, errors: ReadonlyArray<ErrorObject>): ReadonlyArray<ErrorObject> => {
  const out: Array<ErrorObject> = []
  for (const error of errors) {
    if (error.keyword !== "anyOf" || !isObjectIn(explaining.unions, error.parentSchema)) {
      out.push(error)
      continue
    }
    let start = out.length
    while (start > 0 && within(out[start - 1]!.instancePath, error.instancePath)) start--
    const forms: Array<Array<ErrorObject>> = [[]]
    for (const inner of out.splice(start)) {
      if (inner.keyword === "if" && inner.instancePath === error.instancePath && isObjectIn(explaining.forms, inner.parentSchema)) forms.push([])
      else forms.at(-1)!.push(inner)
    }
    const failed = forms.filter((form) => form.length > 0)
    const right = failed.filter((form) => !form.some((inner) => isObjectIn(explaining.tagChecks, inner.parentSchema)))
    out.push(...(right.length > 0 ? right : failed).flat(), error)
  }
  return out
}

// ---------------------------------------------------------------------------
// Error lines.

const where = (error: ErrorObject): string => error.instancePath === "" ? "body" : error.instancePath

/** What the value was, for the errors about its value; only the explaining validator (verbose) has it. */
const got = (error: ErrorObject): string => {
  const json = ["enum", "const", "type"].includes(error.keyword) && error.data !== undefined ? JSON.stringify(error.data) : undefined
  return json === undefined ? "" : ` (got ${json.length > 80 ? `${json.slice(0, 80)}...` : json})`
}

const line = (error: ErrorObject): string => {
  const params: Record<string, unknown> = error.params
  const allowed = params["allowedValues"]
  const detail = Array.isArray(allowed)
    ? `: ${allowed.map((value) => JSON.stringify(value)).join(", ")}`
    : error.keyword === "additionalProperties"
    ? `: ${JSON.stringify(params["additionalProperty"])}`
    : error.keyword === "const"
    ? `: ${JSON.stringify(params["allowedValue"])}`
    : ""
  return `${where(error)} ${error.message ?? error.keyword}${detail}${got(error)}`
}

/**
 * The errors worth reading: the reasons, not the "must match a schema in anyOf"
 * that sum them up. A "must be string" from one branch is dropped where another
 * branch took the value and found what is wrong with it; the type errors left at
 * one place read as one line ("must be boolean or null").
 */
const readable = (errors: ReadonlyArray<ErrorObject>): ReadonlyArray<string> => {
  const reasons = errors.filter((error) => !["if", "anyOf", "oneOf"].includes(error.keyword))
  const explained = (error: ErrorObject) =>
    reasons.some((other) =>
      other.instancePath.startsWith(`${error.instancePath}/`) || (other.instancePath === error.instancePath && other.keyword !== "type")
    )
  type Types = { readonly error: ErrorObject; readonly expected: Array<string> }
  const entries: Array<string | Types> = []
  const typesAt = new Map<string, Types>()
  for (const error of reasons.length > 0 ? reasons : errors) {
    if (error.keyword !== "type") {
      entries.push(line(error))
      continue
    }
    if (explained(error)) continue
    const params: Record<string, unknown> = error.params
    const types = typesAt.get(error.instancePath)
    if (types !== undefined) {
      types.expected.push(String(params["type"]))
    } else {
      const first = { error, expected: [String(params["type"])] }
      typesAt.set(error.instancePath, first)
      entries.push(first)
    }
  }
  const lines = entries.map((entry) =>
    typeof entry === "string" ? entry : `${where(entry.error)} must be ${[...new Set(entry.expected)].join(" or ")}${got(entry.error)}`
  )
  return [...new Set(lines)]
}

let checker: ValidateFunction | undefined
let explainer: { readonly validate: ValidateFunction; readonly explaining: Explaining } | undefined

/**
 * The ways `body` breaks the `POST /responses` request schema, one readable line
 * each (`/input/3 must have required property 'output'`); empty when it is valid.
 */
export const validateRequestBody = (body: unknown): ReadonlyArray<string> => {
  checker ??= compile(load().schema, false)
  if (checker(body)) return []
  if (explainer === undefined) {
    const schema = explaining(load())
    explainer = { validate: compile(schema.schema, true), explaining: schema }
  }
  const { validate, explaining: schema } = explainer
  // The explaining schema accepts what the fixture accepts; were it ever to differ, say so.
  if (validate(body) || validate.errors == null) return [...readable(checker.errors ?? []), "(the explaining validator found nothing more)"]
  return readable(prune(schema, validate.errors))
}
