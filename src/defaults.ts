/** The model used when neither `--model` nor `MINO_MODEL` names one (the README says so too). */
export const DEFAULT_MODEL = "gpt-5.1"
