export { LoopbackTransport } from './loopback.js';
export { PortTransport, servePortTransport } from './port.js';
export { HttpsTransport, type HttpsTransportOptions } from './https.js';
export { isWatchRequest, type Transport, type TransportRequest, type TransportResponse } from './types.js';
