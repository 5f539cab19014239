/**
 * The modules of Mino's second stage, `Mino.agentLayer` (the Agent loop, the model
 * client, the tool registry and bash), loaded when that stage is built: `Mino.ts`
 * composes them, and the chat draws its first prompt before they are loaded
 * (about 2 ms of CPU of ~125 at start-up, and the same for `mino --version`).
 */
export * as AgentLoop from "./agent/AgentLoop.js"
export { ModelClient } from "./model/ModelClient.js"
export { BashRunner } from "./tools/bash/BashRunner.js"
export * as BashTool from "./tools/bash/BashTool.js"
export { erase } from "./tools/Tool.js"
export { ToolRegistry } from "./tools/ToolRegistry.js"
