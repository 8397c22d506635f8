/**
 * The part of socket.io-client 2.x (Engine.IO 3, the protocol the official MetaApi SDK speaks) that the stream
 * client uses; the package ships no types. Installed as the alias `socket.io-client-v2`.
 */
declare module 'socket.io-client-v2' {
  export interface SocketV2 {
    readonly connected: boolean;
    on(event: string, listener: (...args: any[]) => void): SocketV2;
    emit(event: string, ...args: unknown[]): SocketV2;
    removeAllListeners(): SocketV2;
    close(): SocketV2;
  }
  export interface ConnectOptsV2 {
    path?: string;
    forceNew?: boolean;
    reconnection?: boolean;
    timeout?: number;
    transports?: string[];
    extraHeaders?: Record<string, string>;
    query?: Record<string, string>;
  }
  export default function io(url: string, opts?: ConnectOptsV2): SocketV2;
}
