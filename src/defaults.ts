/** The model used when neither `--model` nor `MINO_MODEL` names one (the README says so too). */
export const DEFAULT_MODEL = "gpt-5.1"

/** The largest line a record may take on disk: also the most Mino keeps of one response, which is saved as one record. */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024
