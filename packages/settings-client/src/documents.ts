// Written by `npm run documents` from operations.graphql (`npm run documents:check` verifies it): edit that file, not this one.

/** Operation name → trusted-document id (sha256 of its printed text), as the server's manifest has it. */
export const DOCUMENT_IDS = {
  SettingsStatus: 'ac385eaf613658017d3ddae896a55f90862052505832ed55fa732a32940867c4',
  SettingsLeave: 'd3fd5bd7574c9fb8296edce1be0c475f583e444c246106dbfad4b301b6755529',
  SettingsRejoin: '4cafd9b952346b0102f6f6c5c14226f9a39108c24b2978c27349ecfe7ea67d44',
  SettingsWatch: '1f61aad2c4fd6fa7b0a2749165eb03014436c9fc01d3cd129c25389746385c0f',
  SettingsOlderLeaves: '30cc2f1d6324082ace37e8c6be87bee2bd54a709db7f6a03eb9cb3c55caf826d',
  SettingsLatestPurge: 'd4543b0f6c781c8b826e20ca66b1a453693f30efb0d96068aef578d5fad61982',
  SettingsPurge: '8f4a77718438452ece1af94e3ad08c03d383307c51f7d473bd6885f401c6268f',
  SettingsPurgeProgress: '40a93c804846b9680bae49f9f72bcc72b06b953249f995970a789796c53ae6f7',
} as const;

export type OperationName = keyof typeof DOCUMENT_IDS;
