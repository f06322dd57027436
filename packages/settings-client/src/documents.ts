// Written by `npm run documents` from operations.graphql (`npm run documents:check` verifies it): edit that file, not this one.

/** Operation name → trusted-document id (sha256 of its printed text), as the server's manifest has it. */
export const DOCUMENT_IDS = {
  SettingsStatus: 'ac385eaf613658017d3ddae896a55f90862052505832ed55fa732a32940867c4',
  SettingsLeave: 'd3fd5bd7574c9fb8296edce1be0c475f583e444c246106dbfad4b301b6755529',
  SettingsRejoin: '4cafd9b952346b0102f6f6c5c14226f9a39108c24b2978c27349ecfe7ea67d44',
  SettingsLeaveWithReason: '71787a6131242b15682dbe221ad6d3f08a24eff39ec330c75af3199346f58038',
  SettingsRejoinWithReason: 'fa30f66945e885bcb74b6b98c2cbba9bdac35ae136c24a9fbbcac081349b7612',
  SettingsWatch: '1f61aad2c4fd6fa7b0a2749165eb03014436c9fc01d3cd129c25389746385c0f',
  SettingsOlderLeaves: '30cc2f1d6324082ace37e8c6be87bee2bd54a709db7f6a03eb9cb3c55caf826d',
  SettingsLatestPurge: '962eae7b131a523d066ad7e547456f3cd98be62d2ae8cd4faea3e2510b4ab9cf',
  SettingsPurge: 'b19b45aff2a7052ca79c9338d73f416a25520ddf49f20a223c8947865c689a9a',
  SettingsPurgeProgress: 'e7d0c8b4e32f4a5eef2dc4b8d55c8b7e2e4e419ab5fe6f710fd4b8f76b8003a6',
} as const;

export type OperationName = keyof typeof DOCUMENT_IDS;
