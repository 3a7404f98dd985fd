/**
 * How the client's messages name the settings they ask to check: the single-account variables, or
 * the fields of one account in RECON_ACCOUNTS_FILE. Names only, never values.
 */
export interface ProviderSettingNames {
  readonly environment: string;
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly queryUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly legacyMerchantId: string;
  readonly legacyMerchantPass: string;
  /** Where to set them, e.g. "in the environment or in .env". */
  readonly where: string;
}

export const ENVIRONMENT_SETTING_NAMES: ProviderSettingNames = {
  environment: 'RECON_ENVIRONMENT',
  baseUrl: 'RECON_BASE_URL',
  authUrl: 'RECON_AUTH_URL',
  queryUrl: 'RECON_QUERY_URL',
  clientId: 'RECON_CLIENT_ID',
  clientSecret: 'RECON_CLIENT_SECRET',
  legacyMerchantId: 'RECON_LEGACY_MERCHANT_ID',
  legacyMerchantPass: 'RECON_LEGACY_MERCHANT_PASS',
  where: 'in the environment or in .env',
};

/** The names of one account's fields in RECON_ACCOUNTS_FILE: `account ca-main clientSecret`. */
export function accountSettingNames(account: string): ProviderSettingNames {
  const field = (name: string) => `account ${account} ${name}`;
  return {
    environment: field('environment'),
    baseUrl: field('baseUrl'),
    authUrl: field('authUrl'),
    queryUrl: field('queryUrl'),
    clientId: field('clientId'),
    clientSecret: field('clientSecret'),
    legacyMerchantId: field('legacyMerchantId'),
    legacyMerchantPass: field('legacyMerchantPass'),
    where: 'in RECON_ACCOUNTS_FILE',
  };
}
