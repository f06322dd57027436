export { Sender } from './sender.js';
export { BufferFullError, type Outcome, type SenderOptions, type Signal, type SignalKind } from './types.js';
export { uuidV7 } from './uuid-v7.js';
