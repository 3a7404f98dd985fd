/** Cents as a decimal amount with thousands separators, integer arithmetic only: 123456 → "1,234.56". */
export function formatCents(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return '';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const units = Math.trunc(abs / 100);
  const rest = abs - units * 100;
  return `${sign}${units.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${rest.toString().padStart(2, '0')}`;
}

/** An amount with its currency, never one without the other: ("CAD", 123456) → "CAD 1,234.56". */
export function formatMoney(currency: string | null | undefined, cents: number | null | undefined): string {
  return `${currencyLabel(currency)} ${formatCents(cents ?? 0)}`;
}

/** The currency as shown beside an amount; a discrepancy recorded without one shows "(none)". */
export function currencyLabel(currency: string | null | undefined): string {
  return currency ?? '(none)';
}
