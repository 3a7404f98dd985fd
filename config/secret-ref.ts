/**
 * Secret references of the accounts file: `{ "env": VAR }` or `{ "file": PATH }`, never the secret
 * itself. A file follows the `*_FILE` convention of container secrets: its content is the secret,
 * with one trailing newline dropped. Messages name the variable or the path, never the value.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

export type SecretRef = { readonly env: string } | { readonly file: string };

/** Where a secret comes from, as `recon accounts list` shows it: `env NAME` or `file PATH`. */
export function describeSecretRef(ref: SecretRef, baseDir: string): string {
  return 'env' in ref ? `env ${ref.env}` : `file ${secretPath(ref.file, baseDir)}`;
}

function secretPath(file: string, baseDir: string): string {
  return isAbsolute(file) ? file : resolve(baseDir, file);
}

/** Drops one trailing newline (LF or CRLF), as `echo secret > file` and editors add one. */
export function trimOneNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/**
 * Reads the secret a reference points at. Returns the secret, or a problem that says what to fix
 * (the variable is unset, the file cannot be read, or it is empty). `baseDir` anchors relative paths.
 */
export function resolveSecretRef(
  ref: SecretRef,
  env: NodeJS.ProcessEnv,
  baseDir: string,
): { value: string } | { problem: string } {
  if ('env' in ref) {
    const value = env[ref.env];
    if (value === undefined || value.trim() === '') {
      return { problem: `environment variable ${ref.env} is not set: set it, or point at a file` };
    }
    return { value: value.trim() };
  }
  const path = secretPath(ref.file, baseDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { problem: `cannot read secret file ${path} (${code}): create it or fix the path` };
  }
  const value = trimOneNewline(text);
  if (value === '') return { problem: `secret file ${path} is empty: write the secret into it` };
  return { value };
}
