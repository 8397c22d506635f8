//+------------------------------------------------------------------+
//| CopytradeBridge.mq4: the copytrade terminal bridge EA, MT4.       |
//|                                                                  |
//| UNTESTED. No MetaTrader terminal or MQL compiler was available  |
//| where this was written; it follows the documented MQL4 API       |
//| (WebRequest, OrderSend, OrderClose, OrderModify, OrderDelete,    |
//| OrderSelect) and section 1.1 of docs/bridge-protocol.md (HTTPS   |
//| long polling, POST /bridge/v1/poll, the Bridge-Session header),  |
//| which the service serves and its simulated MT4 EA speaks.        |
//|                                                                  |
//| MT4 has no sockets without a DLL and no OnTradeTransaction: the  |
//| EA polls with WebRequest and finds its account's changes by      |
//| comparing the order lists every timer tick. In MT4 a position is |
//| an order: its ticket is the position's and the order's.         |
//+------------------------------------------------------------------+
#property copyright "copytrade"
#property version   "1.00"
#property strict

input string BridgeUrl   = "https://copytrade.example.com/bridge/v1/poll"; // allow its origin in Tools > Options
input string BridgeToken = "";                                               // ctbt_... shown once by the wizard

#define PROTOCOL 1
#define REMEMBER 1000

long   g_seq = 0;
string g_outbox = "";          // messages for the next poll, comma-separated JSON objects
string g_unconfirmed[];        // events not yet confirmed by "received"
long   g_unconfirmedSeq[];
int    g_knownTickets[];       // open market and pending orders at the last tick
double g_knownLots[];
string g_cmdIds[];
string g_cmdAcks[];
bool   g_welcomed = false;
string g_session = "";         // the Bridge-Session of this connection, "" before the hello's answer
datetime g_lastBeat = 0;

string Q(const string s) { string r = s; StringReplace(r, "\\", "\\\\"); StringReplace(r, "\"", "\\\""); return "\"" + r + "\""; }
string QN(const string s) { return s == "" ? "null" : Q(s); }
string Dec(const double v, const int d) { return Q(DoubleToString(v, d)); }
string DecN(const double v, const int d) { return v == 0.0 ? "null" : Dec(v, d); }
string Tk(const int t) { return t <= 0 ? "null" : Q(IntegerToString(t)); }

string JGet(const string json, const string key)
  {
   string k = "\"" + key + "\":";
   int p = StringFind(json, k);
   if(p < 0) return "";
   p += StringLen(k);
   if(StringGetCharacter(json, p) == '"') { int e = StringFind(json, "\"", p + 1); return StringSubstr(json, p + 1, e - p - 1); }
   int e = p;
   while(e < StringLen(json) && StringGetCharacter(json, e) != ',' && StringGetCharacter(json, e) != '}') e++;
   string v = StringSubstr(json, p, e - p);
   return v == "null" ? "" : v;
  }

void Queue(const string msg) { g_outbox += (g_outbox == "" ? "" : ",") + msg; }

// One long poll: what we have to say goes out, what the service has to say comes back (a JSON array).
bool Poll()
  {
   string body = "[" + g_outbox + "]";
   char data[], result[]; string headers;
   StringToCharArray(body, data, 0, StringLen(body), CP_UTF8);
   string h = "Content-Type: application/json\r\nAuthorization: Bearer " + BridgeToken + "\r\n";
   if(g_session != "") h += "Bridge-Session: " + g_session + "\r\n";
   // Held at most 1 s: WebRequest blocks this EA, which must scan its orders (no OnTradeTransaction in MT4).
   int status = WebRequest("POST", BridgeUrl + "?wait=1", h, 30000, data, result, headers);
   if(status != 200) { Print("copytrade bridge: poll answered ", status, " error ", GetLastError()); g_welcomed = false; g_session = ""; return false; }
   g_outbox = "";
   // No Bridge-Session in the answer: the connection is over (a fatal error says why); start again with hello.
   string sid = HeaderValue(headers, "bridge-session");
   g_session = sid;
   if(sid == "") g_welcomed = false;
   string answer = CharArrayToString(result, 0, WHOLE_ARRAY, CP_UTF8);
   // The answer is an array of flat objects: split on "},{" (no message nests objects except snapshots, sent by us).
   StringReplace(answer, "[", ""); StringReplace(answer, "]", "");
   string parts[]; StringReplace(answer, "},{", "}\n{");
   int n = StringSplit(answer, '\n', parts);
   for(int i = 0; i < n; i++) if(StringLen(parts[i]) > 2) OnMessage(parts[i]);
   return true;
  }

// A response header's value, "" when absent (names compared in lower case: HTTP headers ignore case).
string HeaderValue(const string headers, const string name)
  {
   string lines[]; int n = StringSplit(headers, '\n', lines);
   for(int i = 0; i < n; i++)
     {
      int c = StringFind(lines[i], ":");
      if(c < 0) continue;
      // MQL4's StringTrimLeft/Right return the trimmed copy; StringToLower changes its argument.
      string k = StringTrimRight(StringTrimLeft(StringSubstr(lines[i], 0, c))); StringToLower(k);
      if(k != name) continue;
      return StringTrimRight(StringTrimLeft(StringSubstr(lines[i], c + 1)));
     }
   return "";
  }

void SayHello()
  {
   Queue("{\"type\":\"hello\",\"protocol\":" + IntegerToString(PROTOCOL) + ",\"ea\":\"1.0.0\",\"terminal\":\"mt4\",\"build\":" +
         IntegerToString(TerminalInfoInteger(TERMINAL_BUILD)) + ",\"login\":" + Q(IntegerToString(AccountNumber())) +
         ",\"server\":" + Q(AccountServer()) + ",\"company\":" + Q(AccountCompany()) + ",\"currency\":" + Q(AccountCurrency()) +
         ",\"marginMode\":\"hedging\",\"tradeAllowed\":" + (IsTradeAllowed() ? "true" : "false") +
         ",\"lastSeq\":" + IntegerToString(g_seq) + ",\"oldestSeq\":" + IntegerToString(ArraySize(g_unconfirmedSeq) > 0 ? g_unconfirmedSeq[0] : g_seq + 1) + "}");
  }

void OnMessage(const string m)
  {
   string type = JGet(m, "type");
   if(type == "welcome")
     {
      g_welcomed = true;
      long resume = StringToInteger(JGet(m, "resumeFrom"));
      Confirm(resume);
      for(int i = 0; i < ArraySize(g_unconfirmed); i++) Queue(g_unconfirmed[i]);
     }
   else if(type == "received") Confirm(StringToInteger(JGet(m, "seq")));
   else if(type == "command") OnCommand(m);
   else if(type == "error") Print("copytrade bridge: ", JGet(m, "code"), ": ", JGet(m, "message"));
   // snapshot_request and symbol_request: answered as in the MT5 EA, from OrdersTotal/OrdersHistoryTotal and
   // MarketInfo (left out of this first version: see the file's header).
  }

void Confirm(const long upTo)
  {
   int k = 0;
   while(k < ArraySize(g_unconfirmedSeq) && g_unconfirmedSeq[k] <= upTo) k++;
   if(k > 0) { ArrayCopy(g_unconfirmed, g_unconfirmed, 0, k); ArrayResize(g_unconfirmed, ArraySize(g_unconfirmed) - k);
               ArrayCopy(g_unconfirmedSeq, g_unconfirmedSeq, 0, k); ArrayResize(g_unconfirmedSeq, ArraySize(g_unconfirmedSeq) - k); }
  }

string OrderJson()
  {
   int d = (int)MarketInfo(OrderSymbol(), MODE_DIGITS);
   int t = OrderType();
   string side = (t == OP_BUY || t == OP_BUYLIMIT || t == OP_BUYSTOP) ? "buy" : "sell";
   string kind = (t == OP_BUYLIMIT || t == OP_SELLLIMIT) ? "limit" : (t == OP_BUYSTOP || t == OP_SELLSTOP) ? "stop" : "market";
   bool open = OrderCloseTime() == 0;
   return "{\"ticket\":" + Tk(OrderTicket()) + ",\"symbol\":" + Q(OrderSymbol()) + ",\"side\":" + Q(side) + ",\"type\":" + Q(kind) +
          ",\"volume\":" + Dec(OrderLots(), 2) + ",\"filledVolume\":" + Dec(kind == "market" ? OrderLots() : 0, 2) +
          ",\"price\":" + (kind == "market" ? "null" : Dec(OrderOpenPrice(), d)) + ",\"sl\":" + DecN(OrderStopLoss(), d) + ",\"tp\":" + DecN(OrderTakeProfit(), d) +
          ",\"state\":" + (kind != "market" && open ? "\"placed\"" : (kind != "market" ? "\"canceled\"" : "\"filled\"")) +
          ",\"position\":" + (kind == "market" ? Tk(OrderTicket()) : "null") + ",\"timeSetup\":" + IntegerToString((long)OrderOpenTime() * 1000) +
          ",\"timeDone\":" + (open ? "null" : IntegerToString((long)OrderCloseTime() * 1000)) + ",\"comment\":" + QN(OrderComment()) + "}";
  }

string PositionJson()
  {
   int d = (int)MarketInfo(OrderSymbol(), MODE_DIGITS);
   return "{\"ticket\":" + Tk(OrderTicket()) + ",\"symbol\":" + Q(OrderSymbol()) + ",\"side\":" + (OrderType() == OP_BUY ? "\"buy\"" : "\"sell\"") +
          ",\"volume\":" + Dec(OrderLots(), 2) + ",\"openPrice\":" + Dec(OrderOpenPrice(), d) + ",\"currentPrice\":" + Dec(OrderClosePrice(), d) +
          ",\"sl\":" + DecN(OrderStopLoss(), d) + ",\"tp\":" + DecN(OrderTakeProfit(), d) + ",\"profit\":" + Dec(OrderProfit(), 2) +
          ",\"time\":" + IntegerToString((long)OrderOpenTime() * 1000) + ",\"comment\":" + QN(OrderComment()) + "}";
  }

void Emit(const string transaction, const int ticket, const bool isPosition, const bool stillOpen)
  {
   g_seq++;
   GlobalVariableSet("copytrade_bridge_seq_" + IntegerToString(AccountNumber()), (double)g_seq);
   string state = isPosition ? ",\"positionState\":" + (stillOpen ? PositionJson() : "null") + ",\"orderState\":null"
                             : ",\"positionState\":null,\"orderState\":" + OrderJson();
   string msg = "{\"type\":\"event\",\"seq\":" + IntegerToString(g_seq) + ",\"transaction\":" + Q(transaction) + ",\"order\":" + Tk(ticket) +
                ",\"deal\":null,\"position\":" + (isPosition ? Tk(ticket) : "null") + ",\"symbol\":" + Q(OrderSymbol()) + state +
                ",\"dealState\":null,\"time\":" + IntegerToString((long)TimeCurrent() * 1000) + "}";
   int n = ArraySize(g_unconfirmed);
   ArrayResize(g_unconfirmed, n + 1); ArrayResize(g_unconfirmedSeq, n + 1);
   g_unconfirmed[n] = msg; g_unconfirmedSeq[n] = g_seq;
   Queue(msg);
  }

// MT4 reports nothing by itself: compare the open orders with the last tick's.
void Diff()
  {
   int seen[]; double lots[];
   for(int i = 0; i < OrdersTotal(); i++)
     {
      if(!OrderSelect(i, SELECT_BY_POS, MODE_TRADES)) continue;
      int t = OrderTicket(); bool pos = OrderType() <= OP_SELL;
      int n = ArraySize(seen); ArrayResize(seen, n + 1); ArrayResize(lots, n + 1); seen[n] = t; lots[n] = OrderLots();
      int k = -1; for(int j = 0; j < ArraySize(g_knownTickets); j++) if(g_knownTickets[j] == t) k = j;
      if(k < 0) Emit(pos ? "DEAL_ADD" : "ORDER_ADD", t, pos, true);
      else if(g_knownLots[k] != OrderLots()) Emit("DEAL_ADD", t, pos, true);
     }
   for(int j = 0; j < ArraySize(g_knownTickets); j++)
     {
      bool still = false; for(int i = 0; i < ArraySize(seen); i++) if(seen[i] == g_knownTickets[j]) still = true;
      if(still || !OrderSelect(g_knownTickets[j], SELECT_BY_TICKET, MODE_HISTORY)) continue;
      bool pos = OrderType() <= OP_SELL;
      Emit(pos ? "DEAL_ADD" : "ORDER_DELETE", g_knownTickets[j], pos, false);
     }
   ArrayCopy(g_knownTickets, seen); ArrayResize(g_knownTickets, ArraySize(seen));
   ArrayCopy(g_knownLots, lots); ArrayResize(g_knownLots, ArraySize(lots));
  }

// MT4 error codes as the protocol's MT5 retcodes, so the service reads one vocabulary.
int Retcode(const int err)
  {
   switch(err)
     {
      case 0: return 10009;
      case 129: return 10015; case 130: return 10016; case 131: return 10014; case 132: return 10018;
      case 134: return 10019; case 135: case 138: return 10004; case 136: return 10021; case 141: return 10024;
      case 128: return 10012; case 4108: return 10013;
      default: return 10006;
     }
  }

void OnCommand(const string m)
  {
   string id = JGet(m, "id");
   for(int i = 0; i < ArraySize(g_cmdIds); i++) if(g_cmdIds[i] == id) { string again = g_cmdAcks[i]; StringReplace(again, "\"repeated\":false", "\"repeated\":true"); Queue(again); return; }
   string action = JGet(m, "action"), sym = JGet(m, "symbol"), ot = JGet(m, "orderType");
   double sl = StringToDouble(JGet(m, "sl")), tp = StringToDouble(JGet(m, "tp"));
   int ticket = -1; bool ok = false; int pos = (int)StringToInteger(JGet(m, "position")); int ord = (int)StringToInteger(JGet(m, "order"));
   RefreshRates();
   if(action == "DEAL" && pos > 0 && OrderSelect(pos, SELECT_BY_TICKET))
     {
      string v = JGet(m, "volume");
      ok = OrderClose(pos, v == "" ? OrderLots() : StringToDouble(v), OrderClosePrice(), 20); ticket = pos;
     }
   else if(action == "DEAL" || action == "PENDING")
     {
      int cmd = ot == "buy" ? OP_BUY : ot == "sell" ? OP_SELL : ot == "buy_limit" ? OP_BUYLIMIT : ot == "sell_limit" ? OP_SELLLIMIT : ot == "buy_stop" ? OP_BUYSTOP : OP_SELLSTOP;
      double price = action == "PENDING" ? StringToDouble(JGet(m, "price")) : (cmd == OP_BUY ? MarketInfo(sym, MODE_ASK) : MarketInfo(sym, MODE_BID));
      ticket = OrderSend(sym, cmd, StringToDouble(JGet(m, "volume")), price, 20, sl, tp, JGet(m, "comment"));
      ok = ticket > 0;
     }
   else if(action == "SLTP" && OrderSelect(pos, SELECT_BY_TICKET)) { ok = OrderModify(pos, OrderOpenPrice(), sl, tp, 0); ticket = pos; }
   else if(action == "MODIFY" && OrderSelect(ord, SELECT_BY_TICKET)) { ok = OrderModify(ord, StringToDouble(JGet(m, "price")), sl, tp, 0); ticket = ord; }
   else if(action == "REMOVE") { ok = OrderDelete(ord); ticket = ord; }
   int rc = ok ? (action == "PENDING" ? 10008 : 10009) : Retcode(GetLastError());
   string ack = "{\"type\":\"ack\",\"id\":" + Q(id) + ",\"retcode\":" + IntegerToString(rc) + ",\"message\":\"\",\"order\":" + Tk(ticket) +
                ",\"deal\":null,\"position\":" + (action == "PENDING" ? "null" : Tk(ticket)) + ",\"volume\":null,\"price\":null,\"time\":" +
                IntegerToString((long)TimeCurrent() * 1000) + ",\"repeated\":false,\"retryAfterSec\":null}";
   if(rc != 10004 && rc != 10021 && rc != 10024)
     {
      int n = ArraySize(g_cmdIds); if(n >= REMEMBER) { ArrayCopy(g_cmdIds, g_cmdIds, 0, 1); ArrayCopy(g_cmdAcks, g_cmdAcks, 0, 1); n--; }
      ArrayResize(g_cmdIds, n + 1); ArrayResize(g_cmdAcks, n + 1); g_cmdIds[n] = id; g_cmdAcks[n] = ack;
     }
   Queue(ack);
  }

int OnInit()
  {
   if(BridgeToken == "") { Print("copytrade bridge: set BridgeToken"); return INIT_PARAMETERS_INCORRECT; }
   string gv = "copytrade_bridge_seq_" + IntegerToString(AccountNumber());
   if(GlobalVariableCheck(gv)) g_seq = (long)GlobalVariableGet(gv);
   EventSetTimer(1);
   return INIT_SUCCEEDED;
  }

void OnDeinit(const int reason) { EventKillTimer(); }

void OnTimer()
  {
   // A new connection: hello goes first and alone (unconfirmed events are sent again after the welcome).
   if(!g_welcomed) { g_outbox = ""; g_session = ""; SayHello(); }
   Diff();
   if(g_welcomed && TimeLocal() - g_lastBeat >= 10)
     {
      g_lastBeat = TimeLocal();
      Queue("{\"type\":\"heartbeat\",\"balance\":" + Dec(AccountBalance(), 2) + ",\"equity\":" + Dec(AccountEquity(), 2) +
            ",\"tradeAllowed\":" + (IsTradeAllowed() ? "true" : "false") + ",\"time\":" + IntegerToString((long)TimeCurrent() * 1000) + "}");
     }
   Poll();
  }
//+------------------------------------------------------------------+
