export { Sender } from './sender.js';
export {
  BufferFullError,
  type CloseResult,
  type Outcome,
  type SenderError,
  type SenderOptions,
  type Signal,
  type SignalKind,
} from './types.js';
export { uuidV7 } from './uuid-v7.js';
