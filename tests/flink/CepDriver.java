// Differential-testing driver for the real Apache FlinkCEP engine.
//
// Reads a JSON query spec (or a JSON list of specs) from stdin, evaluates it with FlinkCEP and
// prints the matches.  See tests/flink/README.md for the spec format.
//
// Engines:
//   --engine=nfa (default)  Flink's own compiled NFA (NFACompiler + NFA + SharedBuffer) driven by
//                           a loop that mirrors CepOperator#onEventTime of Flink 2.3.0: for every
//                           distinct timestamp in ascending order advanceTime(ts) then process()
//                           each event with that timestamp (arrival order), and at the end of
//                           input advanceTime(Long.MAX_VALUE) (= the final watermark).
//                           State lives in an in-memory KeyedStateStore (like the heap backend).
//                           Fast: thousands of specs per second in one JVM.
//   --engine=job            A real DataStream job on a local MiniCluster: fromData -> monotonous
//                           event-time watermarks -> CEP.pattern(..).process(..) -> collect.
//                           Slow (seconds); used to cross-check the nfa engine.
//
// Output (default): one JSON line per spec:  {"matches":[{"p1":[1,3],"p2":[4]},...],"count":N}
//                   or {"error":"<exception>"} when Flink rejects the pattern.
// Output (--lines, single spec only): one line per match "p1:1,p1:3;p2:4", then "count=N".
//
// Build: javac -cp "<site-packages>/pyflink/lib/*" -d OUT CepDriver.java

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.cep.CEP;
import org.apache.flink.cep.configuration.SharedBufferCacheConfig;
import org.apache.flink.cep.functions.PatternProcessFunction;
import org.apache.flink.cep.nfa.NFA;
import org.apache.flink.cep.nfa.NFAState;
import org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy;
import org.apache.flink.cep.nfa.aftermatch.SkipToFirstStrategy;
import org.apache.flink.cep.nfa.aftermatch.SkipToLastStrategy;
import org.apache.flink.cep.nfa.compiler.NFACompiler;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBuffer;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBufferAccessor;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.WithinType;
import org.apache.flink.cep.pattern.conditions.IterativeCondition;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public class CepDriver {

    static final ObjectMapper MAPPER = new ObjectMapper();

    // ------------------------------------------------------------------------------------------
    // Event
    // ------------------------------------------------------------------------------------------

    /** Flink POJO: public no-arg constructor and public fields. */
    public static class Event implements Serializable {
        public long id;
        public long name;
        public double price;
        public long ts;

        public Event() {}

        public Event(long id, long name, double price, long ts) {
            this.id = id;
            this.name = name;
            this.price = price;
            this.ts = ts;
        }

        double field(String f) {
            switch (f) {
                case "id": return id;
                case "name": return name;
                case "price": return price;
                case "ts": return ts;
                default: throw new IllegalArgumentException("unknown event field " + f);
            }
        }

        @Override
        public String toString() {
            return "e(" + id + "," + name + "," + price + "@" + ts + ")";
        }
    }

    /** An event of a subclass (spec event {"type": "sub"}): what {@code subtype(SubEvent.class)} accepts. */
    public static class SubEvent extends Event {
        public SubEvent() {}

        public SubEvent(long id, long name, double price, long ts) {
            super(id, name, price, ts);
        }
    }

    /** Orders events with the same timestamp by one field (spec "comparator"): CEP.pattern's EventComparator. */
    static final class FieldComparator implements org.apache.flink.cep.EventComparator<Event> {
        final String field;
        FieldComparator(String field) { this.field = field; new Event().field(field); }
        @Override
        public int compare(Event x, Event y) { return Double.compare(x.field(field), y.field(field)); }
    }

    // ------------------------------------------------------------------------------------------
    // Conditions (all Serializable, as the job engine ships them to the MiniCluster)
    // ------------------------------------------------------------------------------------------

    interface Pred extends Serializable {
        boolean test(Event e, IterativeCondition.Context<Event> ctx) throws Exception;
    }

    static final class Cond extends IterativeCondition<Event> {
        final Pred p;
        final String text;

        Cond(Pred p, String text) {
            this.p = p;
            this.text = text;
        }

        @Override
        public boolean filter(Event e, Context<Event> ctx) throws Exception {
            return p.test(e, ctx);
        }

        @Override
        public String toString() {
            return text;
        }
    }

    static final class NameEq implements Pred {
        final long n;
        NameEq(long n) { this.n = n; }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) { return e.name == n; }
    }

    static final class Cmp implements Pred {
        final String field, op;
        final double v;
        Cmp(String field, String op, double v) { this.field = field; this.op = op; this.v = v; e0(); }
        private void e0() { new Event().field(field); check(op); }
        static void check(String op) {
            switch (op) {
                case "==": case "!=": case "<": case "<=": case ">": case ">=": return;
                default: throw new IllegalArgumentException("bad cmp op " + op);
            }
        }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) {
            double x = e.field(field);
            switch (op) {
                case "==": return x == v;
                case "!=": return x != v;
                case "<": return x < v;
                case "<=": return x <= v;
                case ">": return x > v;
                default: return x >= v;
            }
        }
    }

    /** (sum of price over ctx.getEventsForPattern(of)) + event.price <= bound. */
    static final class SumPriceLe implements Pred {
        final String of;
        final double bound;
        SumPriceLe(String of, double bound) { this.of = of; this.bound = bound; }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) throws Exception {
            double s = e.price;
            for (Event x : ctx.getEventsForPattern(of)) s += x.price;
            return s <= bound;
        }
    }

    static final class And implements Pred {
        final List<Pred> ps;
        And(List<Pred> ps) { this.ps = ps; }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) throws Exception {
            for (Pred p : ps) if (!p.test(e, ctx)) return false;
            return true;
        }
    }

    static final class Or implements Pred {
        final List<Pred> ps;
        Or(List<Pred> ps) { this.ps = ps; }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) throws Exception {
            for (Pred p : ps) if (p.test(e, ctx)) return true;
            return false;
        }
    }

    static final class Not implements Pred {
        final Pred p;
        Not(Pred p) { this.p = p; }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) throws Exception { return !p.test(e, ctx); }
    }

    static final class Const implements Pred {
        final boolean b;
        Const(boolean b) { this.b = b; }
        public boolean test(Event e, IterativeCondition.Context<Event> ctx) { return b; }
    }

    /** COND -> predicate. An object with several keys is the AND of them. */
    static Pred parseCond(JsonNode c, String selfName) {
        if (c == null || c.isNull()) return null;
        if (!c.isObject()) throw new IllegalArgumentException("condition must be an object: " + c);
        List<Pred> parts = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> it = c.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            JsonNode v = f.getValue();
            switch (f.getKey()) {
                case "name_eq": parts.add(new NameEq(v.asLong())); break;
                case "sum_price_le": {
                    String of = c.has("sum_of") ? c.get("sum_of").asText() : selfName;
                    parts.add(new SumPriceLe(of, v.asDouble()));
                    break;
                }
                case "sum_of": break; // modifier of sum_price_le
                case "cmp": parts.add(new Cmp(v.get(0).asText(), v.get(1).asText(), v.get(2).asDouble())); break;
                case "and": { List<Pred> l = new ArrayList<>(); for (JsonNode x : v) l.add(parseCond(x, selfName)); parts.add(new And(l)); break; }
                case "or": { List<Pred> l = new ArrayList<>(); for (JsonNode x : v) l.add(parseCond(x, selfName)); parts.add(new Or(l)); break; }
                case "not": parts.add(new Not(parseCond(v, selfName))); break;
                case "true": parts.add(new Const(v.asBoolean(true))); break;
                case "false": parts.add(new Const(!v.asBoolean(true))); break;
                default: throw new IllegalArgumentException("unknown condition key " + f.getKey());
            }
        }
        if (parts.isEmpty()) return new Const(true);
        return parts.size() == 1 ? parts.get(0) : new And(parts);
    }

    // ------------------------------------------------------------------------------------------
    // Pattern construction
    // ------------------------------------------------------------------------------------------

    static AfterMatchSkipStrategy parseSkip(JsonNode s, boolean throwOnMiss) {
        String v = (s == null || s.isNull()) ? "NO_SKIP" : s.asText();
        if (v.equals("NO_SKIP")) return AfterMatchSkipStrategy.noSkip();
        if (v.equals("SKIP_TO_NEXT")) return AfterMatchSkipStrategy.skipToNext();
        if (v.equals("SKIP_PAST_LAST_EVENT")) return AfterMatchSkipStrategy.skipPastLastEvent();
        if (v.startsWith("SKIP_TO_FIRST:")) {
            SkipToFirstStrategy k = AfterMatchSkipStrategy.skipToFirst(v.substring(14));
            return throwOnMiss ? k.throwExceptionOnMiss() : k;
        }
        if (v.startsWith("SKIP_TO_LAST:")) {
            SkipToLastStrategy k = AfterMatchSkipStrategy.skipToLast(v.substring(13));
            return throwOnMiss ? k.throwExceptionOnMiss() : k;
        }
        throw new IllegalArgumentException("unknown skip strategy " + v);
    }

    static Duration window(JsonNode q) {
        return Duration.ofMillis(q.get("window_ms").asLong());
    }

    static String junction(JsonNode el) {
        JsonNode j = el.get("junction");
        return (j == null || j.isNull()) ? "next" : j.asText();
    }

    static boolean flag(JsonNode el, String k) {
        JsonNode v = el.get(k);
        return v != null && !v.isNull() && v.asBoolean();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static Pattern<Event, Event> buildSequence(JsonNode elems, AfterMatchSkipStrategy skip) {
        if (elems == null || !elems.isArray() || elems.size() == 0)
            throw new IllegalArgumentException("pattern must be a non-empty list");
        Pattern<Event, Event> p = null;
        for (int i = 0; i < elems.size(); i++) {
            JsonNode el = elems.get(i);
            String j = junction(el);
            if (el.has("group")) {
                Pattern<Event, Event> inner = buildSequence(el.get("group"), AfterMatchSkipStrategy.noSkip());
                if (i == 0) {
                    p = (Pattern) Pattern.begin(inner, skip);
                } else {
                    switch (j) {
                        case "next": p = (Pattern) p.next(inner); break;
                        case "followedBy": p = (Pattern) p.followedBy(inner); break;
                        case "followedByAny": p = (Pattern) p.followedByAny(inner); break;
                        default: throw new IllegalArgumentException("junction " + j + " not supported for a group");
                    }
                }
            } else {
                String name = el.get("name").asText();
                if (i == 0) {
                    p = Pattern.<Event>begin(name, skip);
                } else {
                    switch (j) {
                        case "next": p = p.next(name); break;
                        case "followedBy": p = p.followedBy(name); break;
                        case "followedByAny": p = p.followedByAny(name); break;
                        case "notNext": p = p.notNext(name); break;
                        case "notFollowedBy": p = p.notFollowedBy(name); break;
                        default: throw new IllegalArgumentException("unknown junction " + j);
                    }
                }
            }
            // cond (not allowed by Flink on a group: GroupPattern.where throws)
            String selfName = el.has("name") ? el.get("name").asText() : null;
            JsonNode cond = el.get("cond");
            if (cond != null && !cond.isNull()) {
                p = p.where(new Cond(parseCond(cond, selfName), cond.toString()));
            }
            // further where() / or() calls, in order: [["where", COND], ["or", COND], ...]
            JsonNode calls = el.get("conditions");
            if (calls != null && !calls.isNull()) {
                for (JsonNode call : calls) {
                    Cond c = new Cond(parseCond(call.get(1), selfName), call.get(1).toString());
                    switch (call.get(0).asText()) {
                        case "where": p = p.where(c); break;
                        case "or": p = p.or(c); break;
                        default: throw new IllegalArgumentException("unknown condition call " + call.get(0));
                    }
                }
            }
            if (flag(el, "subtype")) p = (Pattern) p.subtype(SubEvent.class);
            // within() on this element (the spec's "within_ms" applies to the last one)
            if (el.hasNonNull("within_ms")) {
                Duration d = Duration.ofMillis(el.get("within_ms").asLong());
                p = el.hasNonNull("within_type") ? p.within(d, WithinType.valueOf(el.get("within_type").asText()))
                                                 : p.within(d);
            }
            JsonNode q = el.get("quant");
            if (q != null && !q.isNull()) {
                boolean w = q.has("window_ms");  // the variants with a windowTime (Duration)
                if (q.has("times")) {
                    JsonNode t = q.get("times");
                    if (t.isArray()) p = w ? p.times(t.get(0).asInt(), t.get(1).asInt(), window(q))
                                           : p.times(t.get(0).asInt(), t.get(1).asInt());
                    else p = w ? p.times(t.asInt(), window(q)) : p.times(t.asInt());
                } else if (q.has("timesOrMore")) {
                    p = w ? p.timesOrMore(q.get("timesOrMore").asInt(), window(q))
                          : p.timesOrMore(q.get("timesOrMore").asInt());
                } else if (q.has("oneOrMore")) {
                    if (q.get("oneOrMore").asBoolean()) p = w ? p.oneOrMore(window(q)) : p.oneOrMore();
                } else {
                    throw new IllegalArgumentException("unknown quantifier " + q);
                }
            }
            JsonNode inner = el.get("inner");
            String in = (inner == null || inner.isNull()) ? "relaxed" : inner.asText();
            switch (in) {
                case "relaxed": break;
                case "consecutive": p = p.consecutive(); break;
                case "allowCombinations": p = p.allowCombinations(); break;
                default: throw new IllegalArgumentException("unknown inner contiguity " + in);
            }
            if (flag(el, "optional")) p = p.optional();
            if (flag(el, "greedy")) p = p.greedy();
            JsonNode until = el.get("until");
            if (until != null && !until.isNull()) {
                p = p.until(new Cond(parseCond(until, selfName), until.toString()));
            }
        }
        return p;
    }

    static final class Spec {
        Pattern<Event, Event> pattern;
        AfterMatchSkipStrategy skip;
        List<Event> events = new ArrayList<>();
        FieldComparator comparator; // null: events of one timestamp in input order
        String error;
        long budgetMs = -1; // -1: use the command line default
    }

    static Spec parseSpec(JsonNode s) {
        Spec spec = new Spec();
        try {
            JsonNode evs = s.get("events");
            if (evs != null) {
                int i = 0;
                for (JsonNode e : evs) {
                    long ts = e.has("ts") ? e.get("ts").asLong() : i * 1000L;
                    long id = e.path("id").asLong(i), name = e.path("name").asLong();
                    double price = e.path("price").asDouble(0);
                    String type = e.path("type").asText("");
                    if (!type.isEmpty() && !type.equals("sub")) throw new IllegalArgumentException("unknown event type " + type);
                    spec.events.add(type.equals("sub") ? new SubEvent(id, name, price, ts) : new Event(id, name, price, ts));
                    i++;
                }
            }
            if (s.has("budget_ms") && !s.get("budget_ms").isNull()) spec.budgetMs = s.get("budget_ms").asLong();
            spec.skip = parseSkip(s.get("skip"), s.path("skip_throw").asBoolean(false));
            if (s.hasNonNull("comparator")) spec.comparator = new FieldComparator(s.get("comparator").asText());
            Pattern<Event, Event> p = buildSequence(s.get("pattern"), spec.skip);
            JsonNode w = s.get("within_ms");
            if (w != null && !w.isNull()) {
                Duration d = Duration.ofMillis(w.asLong());
                p = s.hasNonNull("within_type") ? p.within(d, WithinType.valueOf(s.get("within_type").asText()))
                                                : p.within(d);
            }
            spec.pattern = p;
            // compile eagerly so that malformed patterns are reported per spec
            NFACompiler.compileFactory(p, false).createNFA();
        } catch (Throwable t) {
            spec.error = t.getClass().getSimpleName() + ": " + t.getMessage();
        }
        return spec;
    }

    // ------------------------------------------------------------------------------------------
    // Match rendering
    // ------------------------------------------------------------------------------------------

    static ObjectNode matchJson(Map<String, List<Event>> m) {
        ObjectNode o = MAPPER.createObjectNode();
        for (Map.Entry<String, List<Event>> en : m.entrySet()) {
            ArrayNode a = o.putArray(en.getKey());
            for (Event e : en.getValue()) a.add(e.id);
        }
        return o;
    }

    static String matchLine(JsonNode m) {
        StringBuilder sb = new StringBuilder();
        Iterator<Map.Entry<String, JsonNode>> it = m.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> en = it.next();
            if (sb.length() > 0) sb.append(';');
            boolean first = true;
            for (JsonNode id : en.getValue()) {
                if (!first) sb.append(',');
                sb.append(en.getKey()).append(':').append(id.asLong());
                first = false;
            }
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------------------------------
    // Engine 1: Flink NFA driven like CepOperator (event time)
    // ------------------------------------------------------------------------------------------

    /** Minimal heap KeyedStateStore for a single key (what SharedBuffer / NFA state need). */
    static final class MemStateStore implements KeyedStateStore {
        @Override
        public <T> ValueState<T> getState(ValueStateDescriptor<T> d) {
            return new ValueState<T>() {
                T v;
                public T value() { return v; }
                public void update(T t) { v = t; }
                public void clear() { v = null; }
            };
        }

        @Override
        public <UK, UV> MapState<UK, UV> getMapState(MapStateDescriptor<UK, UV> d) {
            return new MapState<UK, UV>() {
                final HashMap<UK, UV> m = new HashMap<>();
                public UV get(UK k) { return m.get(k); }
                public void put(UK k, UV v) { m.put(k, v); }
                public void putAll(Map<UK, UV> all) { m.putAll(all); }
                public void remove(UK k) { m.remove(k); }
                public boolean contains(UK k) { return m.containsKey(k); }
                public Iterable<Map.Entry<UK, UV>> entries() { return m.entrySet(); }
                public Iterable<UK> keys() { return m.keySet(); }
                public Iterable<UV> values() { return m.values(); }
                public Iterator<Map.Entry<UK, UV>> iterator() { return m.entrySet().iterator(); }
                public boolean isEmpty() { return m.isEmpty(); }
                public void clear() { m.clear(); }
            };
        }

        @Override
        public <T> ListState<T> getListState(ListStateDescriptor<T> d) { throw new UnsupportedOperationException(); }
        @Override
        public <T> ReducingState<T> getReducingState(ReducingStateDescriptor<T> d) { throw new UnsupportedOperationException(); }
        @Override
        public <IN, ACC, OUT> AggregatingState<IN, OUT> getAggregatingState(AggregatingStateDescriptor<IN, ACC, OUT> d) { throw new UnsupportedOperationException(); }
        @Override
        public <T> org.apache.flink.api.common.state.v2.ValueState<T> getValueState(org.apache.flink.api.common.state.v2.ValueStateDescriptor<T> d) { throw new UnsupportedOperationException(); }
        @Override
        public <T> org.apache.flink.api.common.state.v2.ListState<T> getListState(org.apache.flink.api.common.state.v2.ListStateDescriptor<T> d) { throw new UnsupportedOperationException(); }
        @Override
        public <UK, UV> org.apache.flink.api.common.state.v2.MapState<UK, UV> getMapState(org.apache.flink.api.common.state.v2.MapStateDescriptor<UK, UV> d) { throw new UnsupportedOperationException(); }
        @Override
        public <T> org.apache.flink.api.common.state.v2.ReducingState<T> getReducingState(org.apache.flink.api.common.state.v2.ReducingStateDescriptor<T> d) { throw new UnsupportedOperationException(); }
        @Override
        public <IN, ACC, OUT> org.apache.flink.api.common.state.v2.AggregatingState<IN, OUT> getAggregatingState(org.apache.flink.api.common.state.v2.AggregatingStateDescriptor<IN, ACC, OUT> d) { throw new UnsupportedOperationException(); }
        @Override
        public String getBackendTypeIdentifier() { return "driver-heap"; }
    }

    static final boolean DEBUG = System.getenv("CEPDRIVER_DEBUG") != null;
    static TypeSerializer<Event> eventSerializer;

    static ObjectNode runNfa(Spec spec) throws Exception {
        if (eventSerializer == null)
            eventSerializer = TypeInformation.of(Event.class).createSerializer(new SerializerConfigImpl());
        NFA<Event> nfa = NFACompiler.compileFactory(spec.pattern, true).createNFA();
        SharedBuffer<Event> buffer = new SharedBuffer<>(new MemStateStore(), eventSerializer,
                new SharedBufferCacheConfig());
        NFAState state = nfa.createInitialNFAState();
        if (DEBUG) for (org.apache.flink.cep.nfa.State<Event> st : nfa.getStates()) System.err.println("STATE " + st);
        final long[] procTime = {0L};
        org.apache.flink.cep.time.TimerService timers = () -> procTime[0];
        // CepOperator buffers events per timestamp and replays them in ascending timestamp order.
        TreeMap<Long, List<Event>> byTs = new TreeMap<>();
        for (Event e : spec.events) byTs.computeIfAbsent(e.ts, k -> new ArrayList<>()).add(e);
        if (spec.comparator != null) for (List<Event> same : byTs.values()) same.sort(spec.comparator);
        ArrayNode out = MAPPER.createArrayNode();
        ArrayNode timeouts = MAPPER.createArrayNode();
        try {
            for (Map.Entry<Long, List<Event>> en : byTs.entrySet()) {
                long ts = en.getKey();
                advance(nfa, buffer, state, ts, spec.skip, out, timeouts);
                for (Event e : en.getValue()) {
                    try (SharedBufferAccessor<Event> acc = buffer.getAccessor()) {
                        Collection<Map<String, List<Event>>> ms =
                                nfa.process(acc, state, e, ts, spec.skip, timers);
                        for (Map<String, List<Event>> m : ms) out.add(matchJson(m));
                        if (DEBUG) System.err.println("after " + e + ": emitted=" + ms.size()
                                + " partial=" + state.getPartialMatches() + " completed=" + state.getCompletedMatches());
                    }
                }
            }
            // end of input: the bounded source emits the final watermark Long.MAX_VALUE
            advance(nfa, buffer, state, Long.MAX_VALUE, spec.skip, out, timeouts);
        } catch (Throwable t) {
            buffer.releaseCacheStatisticsTimer();
            throw t;
        }
        ObjectNode res = MAPPER.createObjectNode();
        res.set("matches", out);
        res.put("count", out.size());
        res.set("timeouts", timeouts);
        // With a skip strategy other than NO_SKIP, Flink emits completed matches only once no
        // earlier-started partial match is alive. On a finite stream such completed matches can
        // stay buffered forever (the final watermark does not release them unless within() is
        // set). "held" counts them; "held_matches" is what Flink would emit if every live partial
        // match died now (e.g. a following event that continues none of them).
        int held = state.getCompletedMatches().size();
        res.put("held", held);
        if (held > 0) {
            ArrayNode heldOut = MAPPER.createArrayNode();
            try {
                state.getPartialMatches().removeIf(cs -> cs.getStartEventID() != null);
                advance(nfa, buffer, state, Long.MAX_VALUE, spec.skip, heldOut, MAPPER.createArrayNode());
                res.set("held_matches", heldOut);
            } catch (Throwable t) {
                res.put("held_error", t.toString());
            }
        }
        buffer.releaseCacheStatisticsTimer();
        return res;
    }

    /**
     * Runs one spec in a worker thread with a wall-clock budget. Some patterns make Flink's NFA
     * loop forever (NFA#findFinalStateAfterProceed / #createDecisionGraph follow PROCEED edges
     * without a visited set, so a PROCEED cycle never terminates) or explode combinatorially;
     * such a spec is stopped (Thread.stop, still functional on JDK 17) and reported with
     * "budget_exceeded": true.
     */
    @SuppressWarnings({"deprecation", "removal"})
    static ObjectNode runNfaWithBudget(Spec s, long budgetMs) {
        final ObjectNode[] box = new ObjectNode[1];
        final Throwable[] err = new Throwable[1];
        Thread w = new Thread(() -> {
            try {
                box[0] = runNfa(s);
            } catch (Throwable t) {
                err[0] = t;
            }
        }, "cep-spec");
        w.setDaemon(true);
        w.start();
        try {
            w.join(budgetMs > 0 ? budgetMs : 0);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
        ObjectNode r;
        if (w.isAlive()) {
            try {
                w.stop();
            } catch (Throwable ignored) {
                // JDK >= 20: cannot stop; the daemon thread is abandoned
            }
            r = MAPPER.createObjectNode();
            r.put("error", "BudgetExceeded: spec did not finish within " + budgetMs
                    + " ms (endless loop or state explosion in the NFA)");
            r.put("budget_exceeded", true);
        } else if (err[0] != null) {
            Throwable t = err[0];
            r = MAPPER.createObjectNode();
            r.put("error", t.getClass().getSimpleName() + ": " + t.getMessage());
            if (t instanceof OutOfMemoryError) r.put("budget_exceeded", true);
        } else {
            r = box[0];
        }
        return r;
    }

    static void advance(NFA<Event> nfa, SharedBuffer<Event> buffer, NFAState state, long ts,
                        AfterMatchSkipStrategy skip, ArrayNode out, ArrayNode timeouts) throws Exception {
        try (SharedBufferAccessor<Event> acc = buffer.getAccessor()) {
            Tuple2<Collection<Map<String, List<Event>>>, Collection<Tuple2<Map<String, List<Event>>, Long>>> r =
                    nfa.advanceTime(acc, state, ts, skip);
            for (Map<String, List<Event>> m : r.f0) out.add(matchJson(m));
            // r.f1 = timed-out partial matches (TimedOutPartialMatchHandler#processTimedOutMatch)
            for (Tuple2<Map<String, List<Event>>, Long> t : r.f1) timeouts.add(matchJson(t.f0));
        }
    }

    // ------------------------------------------------------------------------------------------
    // Engine 2: real DataStream job on a local MiniCluster
    // ------------------------------------------------------------------------------------------

    static final class EmitMatch extends PatternProcessFunction<Event, Tuple2<Integer, String>> {
        final int idx;
        EmitMatch(int idx) { this.idx = idx; }
        @Override
        public void processMatch(Map<String, List<Event>> match, Context ctx,
                                 Collector<Tuple2<Integer, String>> out) {
            out.collect(Tuple2.of(idx, matchJson(match).toString()));
        }
    }

    static List<ObjectNode> runJobs(List<Spec> specs, int chunk) throws Exception {
        List<ObjectNode> results = new ArrayList<>();
        for (Spec s : specs) {
            ObjectNode r = MAPPER.createObjectNode();
            if (s.error != null) r.put("error", s.error);
            else { r.putArray("matches"); r.put("count", 0); }
            results.add(r);
        }
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.memory.network.min", "256m");
        conf.setString("taskmanager.memory.network.max", "256m");
        for (int start = 0; start < specs.size(); start += chunk) {
            List<Integer> idx = new ArrayList<>();
            for (int k = start; k < Math.min(specs.size(), start + chunk); k++)
                if (specs.get(k).error == null && !specs.get(k).events.isEmpty()) idx.add(k);
            if (idx.isEmpty()) continue;
            try {
                collect(runJob(conf, specs, idx), results);
            } catch (Exception e) {
                // a runtime failure fails the whole job: rerun this chunk one spec per job
                for (int k : idx) {
                    try {
                        collect(runJob(conf, specs, List.of(k)), results);
                    } catch (Exception e1) {
                        Throwable t = e1;
                        while (t.getCause() != null) t = t.getCause();
                        ObjectNode r = MAPPER.createObjectNode();
                        r.put("error", "job failed: " + t.getClass().getSimpleName() + ": " + t.getMessage());
                        results.set(k, r);
                    }
                }
            }
        }
        return results;
    }

    static void collect(List<Tuple2<Integer, String>> rows, List<ObjectNode> results) throws Exception {
        for (Tuple2<Integer, String> t : rows) {
            ObjectNode r = results.get(t.f0);
            ((ArrayNode) r.get("matches")).add(MAPPER.readTree(t.f1));
            r.put("count", r.get("count").asInt() + 1);
        }
    }

    static List<Tuple2<Integer, String>> runJob(Configuration conf, List<Spec> specs, List<Integer> idx)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        DataStream<Tuple2<Integer, String>> all = null;
        for (int k : idx) {
            Spec s = specs.get(k);
            DataStream<Event> in = env.fromData(s.events, TypeInformation.of(Event.class))
                    .assignTimestampsAndWatermarks(WatermarkStrategy.<Event>forMonotonousTimestamps()
                            .withTimestampAssigner((e, t) -> e.ts));
            DataStream<Tuple2<Integer, String>> o = (s.comparator == null ? CEP.pattern(in, s.pattern)
                    : CEP.pattern(in, s.pattern, s.comparator)).process(new EmitMatch(k));
            all = (all == null) ? o : all.union(o);
        }
        List<Tuple2<Integer, String>> rows = new ArrayList<>();
        try (CloseableIterator<Tuple2<Integer, String>> it = all.executeAndCollect("cep-driver")) {
            while (it.hasNext()) rows.add(it.next());
        }
        return rows;
    }

    // ------------------------------------------------------------------------------------------
    // main
    // ------------------------------------------------------------------------------------------

    public static void main(String[] args) throws Exception {
        String engine = "nfa";
        boolean lines = false;
        int chunk = 50;
        long budgetMs = 20_000;
        for (String a : args) {
            if (a.startsWith("--engine=")) engine = a.substring(9);
            else if (a.equals("--lines")) lines = true;
            else if (a.startsWith("--chunk=")) chunk = Integer.parseInt(a.substring(8));
            else if (a.startsWith("--budget-ms=")) budgetMs = Long.parseLong(a.substring(12));
            else throw new IllegalArgumentException("unknown argument " + a);
        }
        BufferedReader rd = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        JsonNode input = MAPPER.readTree(rd);
        List<JsonNode> raw = new ArrayList<>();
        if (input.isArray()) for (JsonNode s : input) raw.add(s);
        else raw.add(input);
        List<Spec> specs = new ArrayList<>();
        for (JsonNode s : raw) specs.add(parseSpec(s));

        List<ObjectNode> results;
        if (engine.equals("nfa")) {
            results = new ArrayList<>();
            for (Spec s : specs) {
                ObjectNode r;
                if (s.error != null) {
                    r = MAPPER.createObjectNode();
                    r.put("error", s.error);
                } else {
                    r = runNfaWithBudget(s, s.budgetMs >= 0 ? s.budgetMs : budgetMs);
                }
                results.add(r);
            }
        } else if (engine.equals("job")) {
            results = runJobs(specs, chunk);
        } else {
            throw new IllegalArgumentException("unknown engine " + engine);
        }

        PrintStream ps = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        for (ObjectNode r : results) {
            if (lines) {
                if (r.has("error")) ps.println("error=" + r.get("error").asText());
                else {
                    for (JsonNode m : r.get("matches")) ps.println(matchLine(m));
                    ps.println("count=" + r.get("count").asInt());
                }
            } else {
                ps.println(r.toString());
            }
        }
        ps.flush();
        System.exit(0);
    }
}
