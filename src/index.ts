/**
 * Mino as a library: the composition root (`Mino.layer`), the Agent loop, its
 * services and their layers, the record and result schemas, and the typed
 * errors. Another Effect program can run a turn with its own tools and approver,
 * giving the key once (it is redacted everywhere):
 *
 * ```ts
 * const mino = Mino.layer({
 *   apiKey,                      // a string or a Redacted
 *   session: { home },           // or "memory"
 *   tools: [myTool],
 *   approver: Approver.layerStatic(() => true)
 * })
 * ```
 *
 * A loopback model server for tests is in `mino-agent/testing`.
 */
export { Agent, AgentBusy, type AgentConfig, type AgentShape, type TurnOptions, type TurnOutcome } from "./agent/Agent.js"
export type { AgentEvent } from "./agent/AgentEvent.js"
export * as Instructions from "./agent/Instructions.js"
export { Approver, type ApproverShape, type Decision } from "./approval/Approver.js"
export {
  type CompletedResponse,
  ModelClient,
  type ModelClientConfig,
  type ModelClientShape,
  ModelError,
  type ModelEvent,
  type ModelReply,
  type ModelRequest,
  requestItems
} from "./model/ModelClient.js"
export type { History } from "./model/request/History.js"
export type { ResponseItem } from "./protocol/ResponseItem.js"
/** The conversation's questions (`Agent.questions`, `SessionStore.questions`): read by index with `at`, kept outside the heap. */
export type { Texts } from "./TextList.js"
export * as Mino from "./Mino.js"
export type { BashOptions, MinoOptions } from "./Mino.js"
export * as Records from "./session/records/Records.js"
export { Secrets, type SecretsShape } from "./security/Secrets.js"
export { INTERRUPTED_NOTICE, INTERRUPTED_TEXT_NOTICE } from "./session/conversation/Recovery.js"
export { DiskError, SessionDisk, type SessionDiskShape } from "./session/conversation/SessionDisk.js"
export * as SessionReader from "./session/records/SessionReader.js"
export * as Conversations from "./session/directory/Conversations.js"
export {
  type ConversationInfo,
  ConversationNotFound,
  type MemorySessionOptions,
  RecordRejected,
  SessionBusy,
  SessionHomeError,
  SessionOpenError,
  type SessionOptions,
  SessionStore,
  type SessionStoreShape,
  SessionWriteError
} from "./session/SessionStore.js"
export { type AnyTool, type Cancellation, type Bound, type DisplayEntry, type DisplayField, erase, type PreparedCall, type Rejection, rejection, type Tool, type ToolDefinition, type ToolDisplay } from "./tools/Tool.js"
export { DuplicateToolName, ToolRegistry, type ToolRegistryShape } from "./tools/ToolRegistry.js"
export * as ToolResult from "./tools/ToolResult.js"
export { type BashOperation, BashRunner } from "./tools/bash/BashRunner.js"
export * as BashTool from "./tools/bash/BashTool.js"
export { fromSignal, type StopRequest, StopSignals, type StopSignalsShape } from "./StopSignals.js"
export { VERSION } from "./version.js"
