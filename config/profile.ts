/**
 * RECON_PROFILE, a developer's switch (observability/profile.ts writes the lines): `1` prints the time
 * of each step of a load (staging, every merge statement) and of each reconciliation statement on
 * stderr; `explain` also prints each merge statement's executed plan (ingest/load/merge-staging.ts).
 * Read once, when the first module that profiles is loaded: a switch for a whole process.
 */
export const PROFILE: string | undefined = process.env.RECON_PROFILE;
