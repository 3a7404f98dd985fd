import { formatMoney } from '../report/format-money.ts';
import { type Preview, PREVIEW_CHANGES, type PreviewChange } from './preview.ts';

const WORDS: Record<PreviewChange, string> = {
  open: 'would open',
  write_off: 'would be written off',
  close: 'would close',
  agree: 'agrees with people',
  disagree: 'DISAGREES with people',
};

/** The preview as text: per account, kind and currency the counts of each change, then the list. */
export function formatPreview(p: Preview): string {
  const out: string[] = [
    `preview of settings ${p.settingsId} (sha256 ${p.sha256.slice(0, 12)}), as of ${p.asOf}, ${p.seconds} s; nothing was written but this record\n`,
  ];
  for (const a of p.accounts) {
    const proposed = a.proposed
      .map(
        (c) =>
          `${c.currency} tolerance ${c.amountCents}, lag ${c.dateLagBusinessDays}, limit ${c.writeOffLimitCents}`,
      )
      .join('; ');
    out.push(
      `account ${a.account}: ${a.from}..${a.to}, version ${a.version} now; proposed: ${proposed || 'exact'}\n`,
    );
    const rows = p.totals.filter((t) => t.account === a.account);
    if (rows.length === 0) out.push('  nothing would change\n');
    const keys = [...new Set(rows.map((t) => `${t.kind}\u0000${t.currency ?? ''}`))];
    for (const key of keys) {
      const [kind, currency] = key.split('\u0000') as [string, string];
      const of = rows.filter((t) => t.kind === kind && (t.currency ?? '') === currency);
      const parts = PREVIEW_CHANGES.flatMap((c) => {
        const t = of.find((x) => x.change === c);
        return t ? [`${WORDS[c]} ${t.count} (${formatMoney(t.currency, t.cents)})`] : [];
      });
      out.push(`  ${kind} ${currency || '(no currency)'}: ${parts.join(', ')}\n`);
    }
  }
  out.push(
    `\n${p.itemCount} item(s)${p.items.length < p.itemCount ? `, the first ${p.items.length}` : ''}:\n`,
  );
  for (const i of p.items)
    out.push(
      `  ${WORDS[i.change]}: ${i.kind} ${i.discrepancy_key} ${i.business_date ?? ''} ${i.difference_cents === null ? '' : formatMoney(i.currency, i.difference_cents)}${i.resolution ? ` (resolved as ${i.resolution})` : ''}\n`,
    );
  out.push('apply it with: recon tolerances apply FILE --by NAME\n');
  return out.join('');
}
