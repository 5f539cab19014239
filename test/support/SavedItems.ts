/**
 * Output items as a session file saves them, for tests that write session files
 * by hand: a `bash` function call and an assistant's answer.
 */

/** A `bash` function call item asking to run `command`. */
export const call = (callId: string, command: string) => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name: "bash",
  arguments: JSON.stringify({ command }),
  status: "completed"
})

/** An assistant's message item saying `text`. */
export const answer = (text: string) => ({ type: "message", id: "msg", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] })
