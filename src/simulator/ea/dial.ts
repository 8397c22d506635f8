import WebSocket from 'ws';

/** What the simulated EA's connection calls back with. */
export interface EaHandlers {
  onOpen(): void;
  /** One message of the service, as JSON text. */
  onMessage(text: string): void;
  /** The connection is over (once); the EA dials again. */
  onClose(): void;
}

/** One connection of the simulated EA to the bridge, whatever its transport. */
export interface EaConnection {
  send(text: string): void;
  /** Ends it as a lost network would: no goodbye. `onClose` follows. */
  cut(): void;
  /** Closes after a protocol error on our side. */
  close(code: number, reason: string): void;
}

export type EaDialer = (url: string, token: string, h: EaHandlers) => EaConnection;

/** MT5's transport: a WebSocket, text frames, the token on the upgrade. */
export const wsDialer: EaDialer = (url, token, h) => {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  ws.on('open', () => h.onOpen());
  ws.on('message', (data) => h.onMessage(String(data)));
  ws.on('error', () => {});
  ws.on('close', () => h.onClose());
  return {
    send: (text) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(text);
    },
    cut: () => ws.terminate(),
    close: (code, reason) => ws.close(code, reason),
  };
};
