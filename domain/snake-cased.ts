/**
 * A record's fields under their snake_case names, as a warehouse row or a JSON answer has them
 * (`amountCents` as `amount_cents`), a field the record leaves out as null: the row's column is
 * written (not left to a default) and the answer's key is there, null.
 */

/** `amountCents` as `amount_cents`, as a type. */
export type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}`
  : S;

/** The fields of `T` whose snake_case names are among `Names` (a table's columns, say). */
export type FieldNamed<T, Names> = {
  [F in keyof T & string]: SnakeCase<F> extends Names ? F : never;
}[keyof T & string];

export type SnakeCased<T, K extends keyof T & string> = {
  -readonly [F in K as SnakeCase<F>]-?: undefined extends T[F] ? Exclude<T[F], undefined> | null : T[F];
};

/**
 * The `fields` of `record` under their snake_case names; one it leaves out (or undefined) is null.
 *
 * @example
 *   snakeCased({ setBy: 'ann', settingsId: undefined }, ['setBy', 'settingsId'])
 *   // { set_by: 'ann', settings_id: null }
 */
export function snakeCased<T extends object, const K extends keyof T & string>(
  record: T,
  fields: readonly K[],
): SnakeCased<T, K> {
  return Object.fromEntries(
    fields.map((f) => [f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), record[f] ?? null]),
  ) as SnakeCased<T, K>;
}
