#include "wire_messages.hpp"

#include <cstring>

#include "node/dag/engine.hpp"
#include "taskring/kernels/comm.hpp"

namespace taskring::net {

namespace cm = kernels::comm;

namespace {
void put_status(Writer& w, const Status& s, size_t max = kMaxErrorBytes) {
  w.put(static_cast<int32_t>(s.code())).str(max == kMaxErrorBytes ? truncate_error(s.message()) : s.message(), max);
}
Status get_status(Reader& r, size_t max = kMaxErrorBytes) {
  const auto code = static_cast<StatusCode>(r.get<int32_t>());
  std::string msg = r.str(max);
  return Status(code, std::move(msg));
}
// OK, or the reader's error naming the message.
Status done(const Reader& r, Msg type) { return r.ok() ? Status::Ok() : r.error(msg_name(type)); }
void put_key(Writer& w, const DomainKey& k) { w.str(k.name, cm::kNameBytes).put(k.seq); }
void get_key(Reader& r, DomainKey* k) {
  k->name = r.str(cm::kNameBytes);
  k->seq = r.get<uint64_t>();
}
}  // namespace

std::vector<char> encode_empty(Msg type) { return Writer(type).take(); }

std::vector<char> HelloMsg::encode() const {
  Writer w(Msg::kHello);
  w.put(protocol).str(version).put(pid).str(host);
  put_status(w, node);
  w.put(static_cast<uint32_t>(names.size()));
  for (const std::string& n : names) w.str(n);
  job.write(w);
  return w.take();
}

Status HelloMsg::decode(Reader& r, uint32_t speaks) {
  protocol = r.get<uint32_t>();
  if (!r.ok() || protocol != speaks) return done(r, Msg::kHello);
  version = r.str();
  pid = r.get<uint32_t>();
  host = r.str();
  node = get_status(r);
  const uint32_t n = r.get<uint32_t>();
  if (n > kMaxHelloNames) r.fail();
  for (uint32_t i = 0; i < n && r.ok(); ++i) names.push_back(r.str());
  job.read(r);
  return done(r, Msg::kHello);
}

// The verdict may quote every rank's refusal: four times a hop's limit.
std::vector<char> WelcomeMsg::encode() const {
  Writer w(Msg::kWelcome);
  put_status(w, verdict, kMaxErrorBytes * 4);
  return w.take();
}

Status WelcomeMsg::decode(Reader& r) {
  verdict = get_status(r, kMaxErrorBytes * 4);
  return done(r, Msg::kWelcome);
}

std::vector<char> TaskMsg::encode() const {
  Writer w(Msg::kTask);
  w.put(seq).put(callable).put(static_cast<uint32_t>(tensors.size()));
  for (size_t i = 0; i < tensors.size(); ++i) w.put(tensors[i]).put(static_cast<int32_t>(tags[i]));
  w.put(static_cast<uint32_t>(scalars.size()));
  for (uint64_t s : scalars) w.put(s);
  return w.take();
}

Status TaskMsg::decode(Reader& r) {
  seq = r.get<uint64_t>();
  callable = r.get<int32_t>();
  const uint32_t n = r.get<uint32_t>();
  if (n > static_cast<uint32_t>(node::kMaxTaskTensors)) r.fail();
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    tensors.push_back(r.get<ChipTensor>());
    tags.push_back(static_cast<TensorArgType>(r.get<int32_t>()));
  }
  const uint32_t ns = r.get<uint32_t>();
  if (ns > static_cast<uint32_t>(node::kMaxTaskScalars)) r.fail();
  for (uint32_t i = 0; i < ns && r.ok(); ++i) scalars.push_back(r.get<uint64_t>());
  return done(r, Msg::kTask);
}

std::vector<char> CompletionMsg::encode() const {
  Writer w(Msg::kCompletion);
  w.put(seq);
  put_status(w, status);
  return w.take();
}

Status CompletionMsg::decode(Reader& r) {
  seq = r.get<uint64_t>();
  status = get_status(r);
  return done(r, Msg::kCompletion);
}

std::vector<char> ControlMsg::encode() const {
  Writer w(Msg::kControl);
  w.put(seq).put(static_cast<uint32_t>(op)).put(a0).put(a1);
  return w.take();
}

Status ControlMsg::decode(Reader& r) {
  seq = r.get<uint64_t>();
  op = static_cast<ControlOp>(r.get<uint32_t>());
  a0 = r.get<uint64_t>();
  a1 = r.get<uint64_t>();
  return done(r, Msg::kControl);
}

std::vector<char> ControlReplyMsg::encode() const {
  Writer w(Msg::kControlReply);
  w.put(seq);
  put_status(w, status);
  w.put(entry.id).put(entry.generation).put(entry.bytes);
  return w.take();
}

Status ControlReplyMsg::decode(Reader& r) {
  seq = r.get<uint64_t>();
  status = get_status(r);
  entry.id = r.get<uint32_t>();
  entry.generation = r.get<uint32_t>();
  entry.bytes = r.get<uint64_t>();
  return done(r, Msg::kControlReply);
}

std::vector<char> TransferMsg::encode() const {
  Writer w(type);
  w.put(tag).put(buffer_id).put(generation).put(offset).put(nbytes).put(direct);
  return w.take();
}

Status TransferMsg::decode(Reader& r) {
  tag = r.get<int32_t>();
  buffer_id = r.get<uint32_t>();
  generation = r.get<uint32_t>();
  offset = r.get<uint64_t>();
  nbytes = r.get<uint64_t>();
  direct = r.get<uint8_t>();
  return done(r, type);
}

std::vector<char> TransferReplyMsg::encode() const {
  Writer w(type);
  w.put(tag);
  put_status(w, status);
  return w.take();
}

Status TransferReplyMsg::decode(Reader& r) {
  tag = r.get<int32_t>();
  status = get_status(r);
  return done(r, type);
}

std::vector<char> DomainArrivedMsg::encode() const {
  Writer w(Msg::kDomainArrived);
  put_key(w, key);
  w.put(static_cast<uint32_t>(ranks.size()));
  for (int32_t x : ranks) w.put(x);
  w.put(fingerprint);
  return w.take();
}

Status DomainArrivedMsg::decode(Reader& r) {
  get_key(r, &key);
  const uint32_t n = r.get<uint32_t>();
  if (n > static_cast<uint32_t>(cm::kMaxRanks)) r.fail();
  for (uint32_t i = 0; i < n && r.ok(); ++i) ranks.push_back(r.get<int32_t>());
  fingerprint = r.get<uint64_t>();
  return done(r, Msg::kDomainArrived);
}

std::vector<char> DomainDataMsg::start(const DomainKey& key) {
  Writer w(Msg::kDomainData);
  put_key(w, key);
  return w.take();
}

void DomainDataMsg::append(std::vector<char>& msg, const DomainRecord& rec) {
  const char* f = reinterpret_cast<const char*>(&rec.from);
  msg.insert(msg.end(), f, f + sizeof(rec.from));
  const char* q = reinterpret_cast<const char*>(&rec.req);
  msg.insert(msg.end(), q, q + sizeof(rec.req));
  if (static_cast<cm::RemoteOp>(rec.req.op) == cm::RemoteOp::kPut)
    msg.insert(msg.end(), rec.payload.begin(), rec.payload.end());
}

std::vector<char> DomainDataMsg::encode() const {
  std::vector<char> m = start(key);
  for (const DomainRecord& rec : records) append(m, rec);
  return m;
}

Status DomainDataMsg::decode(Reader& r) {
  get_key(r, &key);
  while (r.ok() && r.left() > 0) {
    DomainRecord rec;
    rec.from = r.get<int32_t>();
    const char* qb = r.bytes(sizeof(rec.req));
    if (qb == nullptr) break;
    std::memcpy(&rec.req, qb, sizeof(rec.req));
    if (static_cast<cm::RemoteOp>(rec.req.op) == cm::RemoteOp::kPut) {
      if (rec.req.len > cm::kRemoteChunkBytes)
        return invalid_argument("malformed DOMAIN_DATA message (a put of " + std::to_string(rec.req.len) +
                                " B, over kRemoteChunkBytes)");
      const char* payload = r.bytes(rec.req.len);
      if (payload == nullptr) break;
      rec.payload = std::string_view(payload, rec.req.len);
    }
    records.push_back(rec);
  }
  return done(r, Msg::kDomainData);
}

std::vector<char> DomainAbortMsg::encode() const {
  Writer w(Msg::kDomainAbort);
  put_key(w, key);
  return w.take();
}

Status DomainAbortMsg::decode(Reader& r) {
  get_key(r, &key);
  return done(r, Msg::kDomainAbort);
}

std::vector<char> DomainShareMsg::encode() const {
  Writer w(Msg::kDomainShare);
  put_key(w, key);
  w.put(pid).put(fd).put(id).put(fingerprint);
  return w.take();
}

Status DomainShareMsg::decode(Reader& r) {
  get_key(r, &key);
  pid = r.get<int32_t>();
  fd = r.get<int32_t>();
  id = r.get<uint64_t>();
  fingerprint = r.get<uint64_t>();
  return done(r, Msg::kDomainShare);
}

}  // namespace taskring::net
