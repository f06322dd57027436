export { SettingsClient } from './client.js';
export { DOCUMENT_IDS, type OperationName } from './documents.js';
export { SettingsClientError } from './errors.js';
export type {
  Consent,
  LeaveEpisode,
  LeavePage,
  LiveHandlers,
  LiveState,
  Membership,
  PurgeReceipt,
  SettingsClientOptions,
} from './types.js';
