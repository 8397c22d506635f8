//+------------------------------------------------------------------+
//| CopytradeBridge.mq5: the copytrade terminal bridge EA, MT5.       |
//|                                                                  |
//| UNTESTED. No MetaTrader terminal or MQL compiler was available   |
//| where this file was written: it follows the documented MQL5 API  |
//| (SocketCreate, SocketConnect, SocketTlsHandshake, SocketTlsSend, |
//| SocketTlsReadAvailable, OrderSend, OnTradeTransaction) and the   |
//| protocol in docs/bridge-protocol.md, and must be compiled and    |
//| checked with the manual test in docs/platforms/platform-a-       |
//| bridge.md before any real use. The service side is tested        |
//| against a simulated EA (src/simulator/ea/) instead.              |
//|                                                                  |
//| It dials out (wss, no inbound port, no DLL). Allow the service's |
//| origin in Tools > Options > Expert Advisors.                     |
//+------------------------------------------------------------------+
#property copyright "copytrade"
#property version   "1.00"
#property strict

input string BridgeUrl   = "wss://copytrade.example.com/bridge/v1/ws"; // the wizard's url
input string BridgeToken = "";                                           // ctbt_... shown once by the wizard

#define PROTOCOL 1
#define MAX_BUFFER 1000
#define REMEMBER 1000

int      g_sock = INVALID_HANDLE;
bool     g_welcomed = false;
bool     g_tls = true;
string   g_host = "";
uint     g_port = 443;
string   g_path = "/bridge/v1/ws";
uchar    g_in[];                 // bytes read, not yet a whole frame
long     g_seq = 0;              // last event sequence number (kept in a terminal global variable)
string   g_buf[];                // unconfirmed events, oldest first
long     g_bufSeq[];
datetime g_bufSent[];
int      g_heartbeatSec = 10;
int      g_remember = REMEMBER;
string   g_cmdIds[];             // remembered command ids and their acks (also in a file)
string   g_cmdAcks[];
datetime g_lastBeat = 0;
datetime g_nextTry = 0;

//--- JSON helpers: the protocol's messages are flat objects with string, number, boolean and null values
string Q(const string s)
  {
   string r = s;
   StringReplace(r, "\\", "\\\\");
   StringReplace(r, "\"", "\\\"");
   return "\"" + r + "\"";
  }
string QN(const string s) { return s == "" ? "null" : Q(s); }
string Dec(const double v, const int digits) { return Q(DoubleToString(v, digits)); }
string DecN(const double v, const int digits) { return v == 0.0 ? "null" : Dec(v, digits); }
string Tk(const ulong t) { return t == 0 ? "null" : Q(IntegerToString((long)t)); }

// The raw value of "key" in a flat JSON object ("" when absent or null); strings come back unquoted.
string JGet(const string json, const string key)
  {
   string k = "\"" + key + "\":";
   int p = StringFind(json, k);
   if(p < 0) return "";
   p += StringLen(k);
   while(p < StringLen(json) && StringGetCharacter(json, p) == ' ') p++;
   if(StringGetCharacter(json, p) == '"')
     {
      string out = "";
      for(int i = p + 1; i < StringLen(json); i++)
        {
         ushort c = StringGetCharacter(json, i);
         if(c == '\\') { i++; out += ShortToString(StringGetCharacter(json, i)); continue; }
         if(c == '"') break;
         out += ShortToString(c);
        }
      return out;
     }
   int e = p;
   while(e < StringLen(json) && StringGetCharacter(json, e) != ',' && StringGetCharacter(json, e) != '}') e++;
   string v = StringSubstr(json, p, e - p);
   StringTrimRight(v);
   return v == "null" ? "" : v;
  }

//--- socket and WebSocket framing (RFC 6455: client frames are masked)
bool SockSend(uchar &data[], const int len)
  {
   if(g_tls) return SocketTlsSend(g_sock, data, len) == len;
   return SocketSend(g_sock, data, len) == len;
  }

bool WsSendText(const string text)
  {
   if(g_sock == INVALID_HANDLE) return false;
   uchar payload[];
   int n = StringToCharArray(text, payload, 0, WHOLE_ARRAY, CP_UTF8) - 1; // without the terminating zero
   uchar frame[];
   int head = n < 126 ? 2 : (n < 65536 ? 4 : 10);
   ArrayResize(frame, head + 4 + n);
   frame[0] = 0x81; // FIN + text
   if(n < 126) frame[1] = (uchar)(0x80 | n);
   else if(n < 65536) { frame[1] = 0x80 | 126; frame[2] = (uchar)(n >> 8); frame[3] = (uchar)(n & 0xFF); }
   else { frame[1] = 0x80 | 127; for(int i = 0; i < 8; i++) frame[2 + i] = (uchar)(((long)n >> (8 * (7 - i))) & 0xFF); }
   uchar mask[4];
   for(int i = 0; i < 4; i++) { mask[i] = (uchar)(MathRand() & 0xFF); frame[head + i] = mask[i]; }
   for(int i = 0; i < n; i++) frame[head + 4 + i] = payload[i] ^ mask[i % 4];
   return SockSend(frame, ArraySize(frame));
  }

bool ParseUrl()
  {
   string u = BridgeUrl;
   g_tls = StringFind(u, "wss://") == 0;
   if(!g_tls && StringFind(u, "ws://") != 0) return false;
   u = StringSubstr(u, g_tls ? 6 : 5);
   int slash = StringFind(u, "/");
   string hostport = slash < 0 ? u : StringSubstr(u, 0, slash);
   g_path = slash < 0 ? "/" : StringSubstr(u, slash);
   int colon = StringFind(hostport, ":");
   g_host = colon < 0 ? hostport : StringSubstr(hostport, 0, colon);
   g_port = colon < 0 ? (g_tls ? 443 : 80) : (uint)StringToInteger(StringSubstr(hostport, colon + 1));
   return g_host != "";
  }

bool Connect()
  {
   if(!ParseUrl()) { Print("copytrade bridge: BridgeUrl must start with wss:// (or ws:// for a local test)"); return false; }
   g_sock = SocketCreate();
   if(g_sock == INVALID_HANDLE) return false;
   if(!SocketConnect(g_sock, g_host, g_port, 5000) || (g_tls && !SocketTlsHandshake(g_sock, g_host)))
     { Disconnect("connect failed " + IntegerToString(GetLastError())); return false; }
   uchar rnd[16]; uchar key[]; uchar none[];
   for(int i = 0; i < 16; i++) rnd[i] = (uchar)(MathRand() & 0xFF);
   CryptEncode(CRYPT_BASE64, rnd, none, key);
   string req = "GET " + g_path + " HTTP/1.1\r\nHost: " + g_host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
                "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + CharArrayToString(key) + "\r\n" +
                "Authorization: Bearer " + BridgeToken + "\r\n\r\n";
   uchar out[];
   int n = StringToCharArray(req, out, 0, WHOLE_ARRAY, CP_UTF8) - 1;
   if(!SockSend(out, n)) { Disconnect("upgrade not sent"); return false; }
   // The answer's status line: 101 goes on; 401 (token), 429 (rate limit) stop this attempt.
   string answer = "";
   uint until = GetTickCount() + 5000;
   while(StringFind(answer, "\r\n\r\n") < 0 && GetTickCount() < until)
     {
      uchar chunk[];
      int got = g_tls ? SocketTlsReadAvailable(g_sock, chunk, 4096) : SocketRead(g_sock, chunk, SocketIsReadable(g_sock), 100);
      if(got > 0) answer += CharArrayToString(chunk, 0, got);
      else Sleep(10);
     }
   if(StringFind(answer, " 101 ") < 0)
     { Disconnect("refused: " + StringSubstr(answer, 0, StringFind(answer, "\r\n"))); return false; }
   ArrayResize(g_in, 0);
   SayHello();
   return true;
  }

void Disconnect(const string why)
  {
   if(g_sock != INVALID_HANDLE) SocketClose(g_sock);
   g_sock = INVALID_HANDLE;
   g_welcomed = false;
   g_nextTry = TimeLocal() + 5;
   Print("copytrade bridge: disconnected: ", why);
  }

// Whole text frames from what has arrived; a close frame ends the connection.
void ReadFrames()
  {
   uchar chunk[];
   int got = g_tls ? SocketTlsReadAvailable(g_sock, chunk, 65536) : SocketRead(g_sock, chunk, SocketIsReadable(g_sock), 10);
   if(got > 0) { int old = ArraySize(g_in); ArrayResize(g_in, old + got); ArrayCopy(g_in, chunk, old, 0, got); }
   while(ArraySize(g_in) >= 2)
     {
      int op = g_in[0] & 0x0F;
      long len = g_in[1] & 0x7F;
      int head = 2;
      if(len == 126) { if(ArraySize(g_in) < 4) return; len = (g_in[2] << 8) | g_in[3]; head = 4; }
      else if(len == 127) { if(ArraySize(g_in) < 10) return; len = 0; for(int i = 0; i < 8; i++) len = (len << 8) | g_in[2 + i]; head = 10; }
      if(ArraySize(g_in) < head + len) return;
      string text = CharArrayToString(g_in, head, (int)len, CP_UTF8);
      ArrayRemove(g_in, 0, head + (int)len);
      if(op == 0x8) { Disconnect("closed by the service: " + text); return; }
      if(op == 0x1) OnMessage(text);
     }
  }

//--- protocol
void SayHello()
  {
   long oldest = ArraySize(g_bufSeq) > 0 ? g_bufSeq[0] : g_seq + 1;
   bool hedging = AccountInfoInteger(ACCOUNT_MARGIN_MODE) == ACCOUNT_MARGIN_MODE_RETAIL_HEDGING;
   bool allowed = TerminalInfoInteger(TERMINAL_TRADE_ALLOWED) && AccountInfoInteger(ACCOUNT_TRADE_EXPERT);
   WsSendText("{\"type\":\"hello\",\"protocol\":" + IntegerToString(PROTOCOL) + ",\"ea\":\"1.0.0\",\"terminal\":\"mt5\"," +
              "\"build\":" + IntegerToString(TerminalInfoInteger(TERMINAL_BUILD)) + ",\"login\":" + Q(IntegerToString(AccountInfoInteger(ACCOUNT_LOGIN))) +
              ",\"server\":" + Q(AccountInfoString(ACCOUNT_SERVER)) + ",\"company\":" + Q(AccountInfoString(ACCOUNT_COMPANY)) +
              ",\"currency\":" + Q(AccountInfoString(ACCOUNT_CURRENCY)) + ",\"marginMode\":" + (hedging ? "\"hedging\"" : "\"netting\"") +
              ",\"tradeAllowed\":" + (allowed ? "true" : "false") + ",\"lastSeq\":" + IntegerToString(g_seq) +
              ",\"oldestSeq\":" + IntegerToString(oldest) + "}");
  }

void OnMessage(const string m)
  {
   string type = JGet(m, "type");
   if(type == "welcome")
     {
      long resume = StringToInteger(JGet(m, "resumeFrom"));
      g_heartbeatSec = (int)StringToInteger(JGet(m, "heartbeatSec"));
      g_remember = (int)MathMax(REMEMBER, StringToInteger(JGet(m, "rememberCommands")));
      Confirm(resume);
      g_welcomed = true;
      Print("copytrade bridge: welcome, resume from ", resume);
      for(int i = 0; i < ArraySize(g_buf); i++) { WsSendText(g_buf[i]); g_bufSent[i] = TimeLocal(); }
     }
   else if(type == "received") Confirm(StringToInteger(JGet(m, "seq")));
   else if(type == "command") OnCommand(m);
   else if(type == "snapshot_request") SendSnapshot(JGet(m, "id"), (datetime)(StringToInteger(JGet(m, "dealsSince")) / 1000));
   else if(type == "symbol_request") SendSymbol(JGet(m, "id"), JGet(m, "symbol"));
   else if(type == "error") Print("copytrade bridge: ", JGet(m, "code"), ": ", JGet(m, "message"));
  }

void Confirm(const long upTo)
  {
   int keep = 0;
   while(keep < ArraySize(g_bufSeq) && g_bufSeq[keep] <= upTo) keep++;
   if(keep > 0) { ArrayRemove(g_buf, 0, keep); ArrayRemove(g_bufSeq, 0, keep); ArrayRemove(g_bufSent, 0, keep); }
  }

void Emit(const string body)
  {
   g_seq++;
   GlobalVariableSet("copytrade_bridge_seq_" + IntegerToString(AccountInfoInteger(ACCOUNT_LOGIN)), (double)g_seq);
   string msg = "{\"type\":\"event\",\"seq\":" + IntegerToString(g_seq) + "," + body + "}";
   int n = ArraySize(g_buf);
   if(n >= MAX_BUFFER) { ArrayRemove(g_buf, 0, 1); ArrayRemove(g_bufSeq, 0, 1); ArrayRemove(g_bufSent, 0, 1); n--; }
   ArrayResize(g_buf, n + 1); ArrayResize(g_bufSeq, n + 1); ArrayResize(g_bufSent, n + 1);
   g_buf[n] = msg; g_bufSeq[n] = g_seq; g_bufSent[n] = TimeLocal();
   if(g_welcomed) WsSendText(msg);
  }

string PositionJson(const ulong ticket)
  {
   if(!PositionSelectByTicket(ticket)) return "null";
   int d = (int)SymbolInfoInteger(PositionGetString(POSITION_SYMBOL), SYMBOL_DIGITS);
   return "{\"ticket\":" + Tk(ticket) + ",\"symbol\":" + Q(PositionGetString(POSITION_SYMBOL)) +
          ",\"side\":" + (PositionGetInteger(POSITION_TYPE) == POSITION_TYPE_BUY ? "\"buy\"" : "\"sell\"") +
          ",\"volume\":" + Dec(PositionGetDouble(POSITION_VOLUME), 2) + ",\"openPrice\":" + Dec(PositionGetDouble(POSITION_PRICE_OPEN), d) +
          ",\"currentPrice\":" + Dec(PositionGetDouble(POSITION_PRICE_CURRENT), d) + ",\"sl\":" + DecN(PositionGetDouble(POSITION_SL), d) +
          ",\"tp\":" + DecN(PositionGetDouble(POSITION_TP), d) + ",\"profit\":" + Dec(PositionGetDouble(POSITION_PROFIT), 2) +
          ",\"time\":" + IntegerToString(PositionGetInteger(POSITION_TIME_MSC)) + ",\"comment\":" + QN(PositionGetString(POSITION_COMMENT)) + "}";
  }

string OrderState(const long s)
  {
   if(s == ORDER_STATE_FILLED) return "filled";
   if(s == ORDER_STATE_CANCELED || s == ORDER_STATE_EXPIRED) return "canceled";
   if(s == ORDER_STATE_REJECTED) return "rejected";
   if(s == ORDER_STATE_PARTIAL) return "partial";
   return "placed";
  }

string OrderTypeJson(const long t, string &side)
  {
   side = (t == ORDER_TYPE_BUY || t == ORDER_TYPE_BUY_LIMIT || t == ORDER_TYPE_BUY_STOP) ? "buy" : "sell";
   if(t == ORDER_TYPE_BUY_LIMIT || t == ORDER_TYPE_SELL_LIMIT) return "limit";
   if(t == ORDER_TYPE_BUY_STOP || t == ORDER_TYPE_SELL_STOP) return "stop";
   return "market";
  }

// An order from the live list or, once final, from the history.
string OrderJson(const ulong ticket)
  {
   bool live = OrderSelect(ticket);
   if(!live && !HistoryOrderSelect(ticket)) return "null";
   string sym = live ? OrderGetString(ORDER_SYMBOL) : HistoryOrderGetString(ticket, ORDER_SYMBOL);
   int d = (int)SymbolInfoInteger(sym, SYMBOL_DIGITS);
   long type = live ? OrderGetInteger(ORDER_TYPE) : HistoryOrderGetInteger(ticket, ORDER_TYPE);
   string side; string kind = OrderTypeJson(type, side);
   double vi = live ? OrderGetDouble(ORDER_VOLUME_INITIAL) : HistoryOrderGetDouble(ticket, ORDER_VOLUME_INITIAL);
   double vc = live ? OrderGetDouble(ORDER_VOLUME_CURRENT) : HistoryOrderGetDouble(ticket, ORDER_VOLUME_CURRENT);
   double price = live ? OrderGetDouble(ORDER_PRICE_OPEN) : HistoryOrderGetDouble(ticket, ORDER_PRICE_OPEN);
   long done = live ? 0 : HistoryOrderGetInteger(ticket, ORDER_TIME_DONE_MSC);
   return "{\"ticket\":" + Tk(ticket) + ",\"symbol\":" + Q(sym) + ",\"side\":" + Q(side) + ",\"type\":" + Q(kind) +
          ",\"volume\":" + Dec(vi, 2) + ",\"filledVolume\":" + Dec(vi - vc, 2) + ",\"price\":" + (kind == "market" ? "null" : Dec(price, d)) +
          ",\"sl\":" + DecN(live ? OrderGetDouble(ORDER_SL) : HistoryOrderGetDouble(ticket, ORDER_SL), d) +
          ",\"tp\":" + DecN(live ? OrderGetDouble(ORDER_TP) : HistoryOrderGetDouble(ticket, ORDER_TP), d) +
          ",\"state\":" + Q(OrderState(live ? OrderGetInteger(ORDER_STATE) : HistoryOrderGetInteger(ticket, ORDER_STATE))) +
          ",\"position\":" + Tk((ulong)(live ? OrderGetInteger(ORDER_POSITION_ID) : HistoryOrderGetInteger(ticket, ORDER_POSITION_ID))) +
          ",\"timeSetup\":" + IntegerToString(live ? OrderGetInteger(ORDER_TIME_SETUP_MSC) : HistoryOrderGetInteger(ticket, ORDER_TIME_SETUP_MSC)) +
          ",\"timeDone\":" + (done > 0 ? IntegerToString(done) : "null") +
          ",\"comment\":" + QN(live ? OrderGetString(ORDER_COMMENT) : HistoryOrderGetString(ticket, ORDER_COMMENT)) + "}";
  }

string DealJson(const ulong ticket)
  {
   if(!HistoryDealSelect(ticket)) return "null";
   string sym = HistoryDealGetString(ticket, DEAL_SYMBOL);
   long entry = HistoryDealGetInteger(ticket, DEAL_ENTRY);
   if(sym == "") return "null"; // balance operations are not trades
   return "{\"ticket\":" + Tk(ticket) + ",\"order\":" + Tk((ulong)HistoryDealGetInteger(ticket, DEAL_ORDER)) +
          ",\"position\":" + Q(IntegerToString(HistoryDealGetInteger(ticket, DEAL_POSITION_ID))) + ",\"symbol\":" + Q(sym) +
          ",\"side\":" + (HistoryDealGetInteger(ticket, DEAL_TYPE) == DEAL_TYPE_BUY ? "\"buy\"" : "\"sell\"") +
          ",\"entry\":" + (entry == DEAL_ENTRY_IN ? "\"in\"" : (entry == DEAL_ENTRY_INOUT ? "\"inout\"" : "\"out\"")) +
          ",\"volume\":" + Dec(HistoryDealGetDouble(ticket, DEAL_VOLUME), 2) +
          ",\"price\":" + Dec(HistoryDealGetDouble(ticket, DEAL_PRICE), (int)SymbolInfoInteger(sym, SYMBOL_DIGITS)) +
          ",\"profit\":" + Dec(HistoryDealGetDouble(ticket, DEAL_PROFIT), 2) +
          ",\"time\":" + IntegerToString(HistoryDealGetInteger(ticket, DEAL_TIME_MSC)) + ",\"comment\":" + QN(HistoryDealGetString(ticket, DEAL_COMMENT)) + "}";
  }

void OnTradeTransaction(const MqlTradeTransaction &t, const MqlTradeRequest &request, const MqlTradeResult &result)
  {
   string type;
   switch(t.type)
     {
      case TRADE_TRANSACTION_ORDER_ADD:    type = "ORDER_ADD"; break;
      case TRADE_TRANSACTION_ORDER_UPDATE: type = "ORDER_UPDATE"; break;
      case TRADE_TRANSACTION_ORDER_DELETE: type = "ORDER_DELETE"; break;
      case TRADE_TRANSACTION_HISTORY_ADD:  type = "HISTORY_ADD"; break;
      case TRADE_TRANSACTION_DEAL_ADD:     type = "DEAL_ADD"; break;
      case TRADE_TRANSACTION_POSITION:     type = "POSITION"; break;
      default: return; // REQUEST and the rest carry nothing the service needs
     }
   if(t.type == TRADE_TRANSACTION_DEAL_ADD) HistorySelect(TimeCurrent() - 86400, TimeCurrent() + 60);
   Emit("\"transaction\":" + Q(type) + ",\"order\":" + Tk(t.order) + ",\"deal\":" + Tk(t.deal) + ",\"position\":" + Tk(t.position) +
        ",\"symbol\":" + QN(t.symbol) + ",\"positionState\":" + (t.position > 0 ? PositionJson(t.position) : "null") +
        ",\"orderState\":" + (t.order > 0 ? OrderJson(t.order) : "null") + ",\"dealState\":" + (t.deal > 0 ? DealJson(t.deal) : "null") +
        ",\"time\":" + IntegerToString((long)TimeCurrent() * 1000));
  }

//--- commands: each id executed once; the answer is remembered (memory and file) and sent again on a repeat
int Remembered(const string id)
  {
   for(int i = ArraySize(g_cmdIds) - 1; i >= 0; i--) if(g_cmdIds[i] == id) return i;
   return -1;
  }

void Remember(const string id, const string ack)
  {
   int n = ArraySize(g_cmdIds);
   if(n >= g_remember) { ArrayRemove(g_cmdIds, 0, 1); ArrayRemove(g_cmdAcks, 0, 1); n--; }
   ArrayResize(g_cmdIds, n + 1); ArrayResize(g_cmdAcks, n + 1);
   g_cmdIds[n] = id; g_cmdAcks[n] = ack;
   int f = FileOpen("copytrade_bridge_commands.txt", FILE_WRITE | FILE_READ | FILE_TXT | FILE_ANSI);
   if(f != INVALID_HANDLE) { FileSeek(f, 0, SEEK_END); FileWriteString(f, id + "\t" + ack + "\n"); FileClose(f); }
  }

void OnCommand(const string m)
  {
   string id = JGet(m, "id");
   int k = Remembered(id);
   if(k >= 0) { string again = g_cmdAcks[k]; StringReplace(again, "\"repeated\":false", "\"repeated\":true"); WsSendText(again); return; }
   MqlTradeRequest r; MqlTradeResult res;
   ZeroMemory(r); ZeroMemory(res);
   string action = JGet(m, "action");
   string sym = JGet(m, "symbol");
   r.comment = JGet(m, "comment");
   r.sl = StringToDouble(JGet(m, "sl"));
   r.tp = StringToDouble(JGet(m, "tp"));
   r.deviation = 20;
   r.type_filling = ORDER_FILLING_IOC;
   if(action == "DEAL")
     {
      r.action = TRADE_ACTION_DEAL;
      ulong pos = (ulong)StringToInteger(JGet(m, "position"));
      if(pos > 0 && PositionSelectByTicket(pos))
        {
         // A close: the opposite of the position's type, by its ticket.
         r.position = pos; sym = PositionGetString(POSITION_SYMBOL);
         r.type = PositionGetInteger(POSITION_TYPE) == POSITION_TYPE_BUY ? ORDER_TYPE_SELL : ORDER_TYPE_BUY;
         string v = JGet(m, "volume");
         r.volume = v == "" ? PositionGetDouble(POSITION_VOLUME) : StringToDouble(v);
         r.sl = 0; r.tp = 0;
        }
      else
        {
         r.type = JGet(m, "orderType") == "buy" ? ORDER_TYPE_BUY : ORDER_TYPE_SELL;
         r.volume = StringToDouble(JGet(m, "volume"));
        }
      r.symbol = sym;
      r.price = r.type == ORDER_TYPE_BUY ? SymbolInfoDouble(sym, SYMBOL_ASK) : SymbolInfoDouble(sym, SYMBOL_BID);
     }
   else if(action == "PENDING")
     {
      string ot = JGet(m, "orderType");
      r.action = TRADE_ACTION_PENDING; r.symbol = sym; r.volume = StringToDouble(JGet(m, "volume"));
      r.price = StringToDouble(JGet(m, "price")); r.type_filling = ORDER_FILLING_RETURN;
      r.type = ot == "buy_limit" ? ORDER_TYPE_BUY_LIMIT : ot == "sell_limit" ? ORDER_TYPE_SELL_LIMIT : ot == "buy_stop" ? ORDER_TYPE_BUY_STOP : ORDER_TYPE_SELL_STOP;
     }
   else if(action == "SLTP") { r.action = TRADE_ACTION_SLTP; r.position = (ulong)StringToInteger(JGet(m, "position")); }
   else if(action == "MODIFY") { r.action = TRADE_ACTION_MODIFY; r.order = (ulong)StringToInteger(JGet(m, "order")); r.price = StringToDouble(JGet(m, "price")); }
   else if(action == "REMOVE") { r.action = TRADE_ACTION_REMOVE; r.order = (ulong)StringToInteger(JGet(m, "order")); }
   if(!OrderSend(r, res) && res.retcode == 0) res.retcode = TRADE_RETCODE_ERROR;
   ulong position = r.position;
   if(res.deal > 0 && HistoryDealSelect(res.deal)) position = (ulong)HistoryDealGetInteger(res.deal, DEAL_POSITION_ID);
   int d = (int)SymbolInfoInteger(r.symbol, SYMBOL_DIGITS);
   string ack = "{\"type\":\"ack\",\"id\":" + Q(id) + ",\"retcode\":" + IntegerToString(res.retcode) + ",\"message\":" + Q(res.comment) +
                ",\"order\":" + Tk(res.order) + ",\"deal\":" + Tk(res.deal) + ",\"position\":" + Tk(position) +
                ",\"volume\":" + DecN(res.volume, 2) + ",\"price\":" + DecN(res.price, d) + ",\"time\":" + IntegerToString((long)TimeCurrent() * 1000) +
                ",\"repeated\":false,\"retryAfterSec\":null}";
   uint rc = res.retcode;
   bool retryable = rc == TRADE_RETCODE_REQUOTE || rc == TRADE_RETCODE_PRICE_CHANGED || rc == TRADE_RETCODE_PRICE_OFF ||
                    rc == TRADE_RETCODE_TOO_MANY_REQUESTS || rc == TRADE_RETCODE_CONNECTION;
   if(!retryable) Remember(id, ack);
   WsSendText(ack);
  }

//--- reads
void SendSnapshot(const string id, const datetime since)
  {
   string pos = "", ord = "", hist = "", deals = "";
   for(int i = 0; i < PositionsTotal(); i++) { ulong t = PositionGetTicket(i); pos += (pos == "" ? "" : ",") + PositionJson(t); }
   for(int i = 0; i < OrdersTotal(); i++) { ulong t = OrderGetTicket(i); ord += (ord == "" ? "" : ",") + OrderJson(t); }
   HistorySelect(since, TimeCurrent() + 60);
   for(int i = 0; i < HistoryOrdersTotal(); i++) { ulong t = HistoryOrderGetTicket(i); hist += (hist == "" ? "" : ",") + OrderJson(t); }
   for(int i = 0; i < HistoryDealsTotal(); i++)
     { string dj = DealJson(HistoryDealGetTicket(i)); if(dj != "null") deals += (deals == "" ? "" : ",") + dj; }
   WsSendText("{\"type\":\"snapshot\",\"id\":" + Q(id) + ",\"balance\":" + Dec(AccountInfoDouble(ACCOUNT_BALANCE), 2) +
              ",\"equity\":" + Dec(AccountInfoDouble(ACCOUNT_EQUITY), 2) + ",\"currency\":" + Q(AccountInfoString(ACCOUNT_CURRENCY)) +
              ",\"positions\":[" + pos + "],\"orders\":[" + ord + "],\"history\":[" + hist + "],\"deals\":[" + deals + "],\"seq\":" + IntegerToString(g_seq) + "}");
  }

void SendSymbol(const string id, const string sym)
  {
   bool found = SymbolSelect(sym, true);
   if(!found)
     {
      WsSendText("{\"type\":\"symbol\",\"id\":" + Q(id) + ",\"symbol\":" + Q(sym) + ",\"found\":false,\"volumeMin\":null,\"volumeMax\":null," +
                 "\"volumeStep\":null,\"contractSize\":null,\"tickSize\":null,\"digits\":null,\"bid\":null,\"ask\":null}");
      return;
     }
   int d = (int)SymbolInfoInteger(sym, SYMBOL_DIGITS);
   MqlTick tick; bool priced = SymbolInfoTick(sym, tick);
   WsSendText("{\"type\":\"symbol\",\"id\":" + Q(id) + ",\"symbol\":" + Q(sym) + ",\"found\":true,\"volumeMin\":" + Dec(SymbolInfoDouble(sym, SYMBOL_VOLUME_MIN), 2) +
              ",\"volumeMax\":" + Dec(SymbolInfoDouble(sym, SYMBOL_VOLUME_MAX), 2) + ",\"volumeStep\":" + Dec(SymbolInfoDouble(sym, SYMBOL_VOLUME_STEP), 2) +
              ",\"contractSize\":" + Dec(SymbolInfoDouble(sym, SYMBOL_TRADE_CONTRACT_SIZE), 2) + ",\"tickSize\":" + Dec(SymbolInfoDouble(sym, SYMBOL_TRADE_TICK_SIZE), d) +
              ",\"digits\":" + IntegerToString(d) + ",\"bid\":" + (priced ? Dec(tick.bid, d) : "null") + ",\"ask\":" + (priced ? Dec(tick.ask, d) : "null") + "}");
  }

//--- lifecycle
int OnInit()
  {
   if(BridgeToken == "") { Print("copytrade bridge: set BridgeToken (the wizard shows it once)"); return INIT_PARAMETERS_INCORRECT; }
   string gv = "copytrade_bridge_seq_" + IntegerToString(AccountInfoInteger(ACCOUNT_LOGIN));
   if(GlobalVariableCheck(gv)) g_seq = (long)GlobalVariableGet(gv);
   int f = FileOpen("copytrade_bridge_commands.txt", FILE_READ | FILE_TXT | FILE_ANSI);
   if(f != INVALID_HANDLE)
     {
      while(!FileIsEnding(f))
        {
         string line = FileReadString(f); int tab = StringFind(line, "\t");
         if(tab > 0) { int n = ArraySize(g_cmdIds); ArrayResize(g_cmdIds, n + 1); ArrayResize(g_cmdAcks, n + 1); g_cmdIds[n] = StringSubstr(line, 0, tab); g_cmdAcks[n] = StringSubstr(line, tab + 1); }
        }
      FileClose(f);
     }
   MathSrand(GetTickCount());
   EventSetMillisecondTimer(200);
   return INIT_SUCCEEDED;
  }

void OnDeinit(const int reason) { EventKillTimer(); if(g_sock != INVALID_HANDLE) SocketClose(g_sock); }

void OnTimer()
  {
   if(g_sock == INVALID_HANDLE) { if(TimeLocal() >= g_nextTry) Connect(); return; }
   if(!SocketIsConnected(g_sock)) { Disconnect("connection lost"); return; }
   ReadFrames();
   if(!g_welcomed || g_sock == INVALID_HANDLE) return;
   if(TimeLocal() - g_lastBeat >= g_heartbeatSec)
     {
      g_lastBeat = TimeLocal();
      bool allowed = TerminalInfoInteger(TERMINAL_TRADE_ALLOWED) && AccountInfoInteger(ACCOUNT_TRADE_EXPERT);
      WsSendText("{\"type\":\"heartbeat\",\"balance\":" + Dec(AccountInfoDouble(ACCOUNT_BALANCE), 2) + ",\"equity\":" + Dec(AccountInfoDouble(ACCOUNT_EQUITY), 2) +
                 ",\"tradeAllowed\":" + (allowed ? "true" : "false") + ",\"time\":" + IntegerToString((long)TimeCurrent() * 1000) + "}");
      // Events unconfirmed for a heartbeat period are sent again (a lost last event has no successor to show its gap).
      for(int i = 0; i < ArraySize(g_buf); i++)
         if(TimeLocal() - g_bufSent[i] >= g_heartbeatSec) { WsSendText(g_buf[i]); g_bufSent[i] = TimeLocal(); }
     }
  }
//+------------------------------------------------------------------+
