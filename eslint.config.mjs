// ESLint 10 reads only flat config (this file); `.eslintrc.*` files are ignored.
import js from "@eslint/js"
import tseslint from "typescript-eslint"
import effect from "@effect/eslint-plugin"

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    plugins: { "@effect": effect },
    rules: {
      "@effect/no-import-from-barrel-package": ["error", { packageNames: ["effect", "@effect/platform", "@effect/platform-node", "@effect/cli"] }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-control-regex": "off"
    }
  },
  {
    files: ["scripts/**/*.mjs", "bin/**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } }
  }
)
