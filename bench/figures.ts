/** How the benches round and summarise their figures. */

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** The middle value (the mean of the two middle ones), as it is. */
export function middle(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** The middle value (the mean of the two middle ones), rounded to hundredths. */
export function median(values: readonly number[]): number {
  return round2(middle(values));
}
