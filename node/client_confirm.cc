// aweft::Client's durable questions (Confirm), apart from client.cc, which
// connects and shares.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include "node/client.h"
#include "node/messages.h"

namespace aweft {

void Client::Confirm(node::Level at) {
  if (at == node::Level::kReplicas) confirm_replicas_ = true;
  if (confirm_posted_ || closed_) return;
  confirm_posted_ = true;
  std::weak_ptr<Client*> self = self_;
  // After a refusal, ask again in a second rather than at the usual pace.
  confirm_.expires_after(
      confirm_error_.empty()
          ? options_.confirm_every
          : std::max<std::chrono::milliseconds>(options_.confirm_every, std::chrono::seconds(1)));
  confirm_.async_wait([self](boost::system::error_code ec) {
    auto alive = self.lock();
    if (ec || !alive || !*alive) return;
    Client& client = **alive;
    client.confirm_posted_ = false;
    if (!client.requests_ || !client.live_ || client.asking_) {
      if (!client.closed_) client.Confirm();  // Try again later.
      return;
    }
    // What this question confirms is taken now, not when the post runs: the
    // commits the link has sent or posted to send by now, whose frames
    // therefore leave before the question, and the store head with them. A
    // commit made between the post and its run may leave after the question,
    // and a node killed before it did would have marked it confirmed. A
    // share that is not live, or waits for the node's state, confirms none:
    // its commits are held, or the resync drops them.
    std::map<std::string, uint64_t> marks;
    std::map<std::string, uint64_t> seqs;
    for (auto& [name, entry] : client.entries_) {
      if (!entry.sending || !entry.shared || !entry.shared->live()) continue;
      marks[name] = entry.numbered;
      if (client.options_.mark) seqs[name] = client.options_.mark(name);
    }
    // One question at a time: answers retire from the front. A lost
    // connection clears `asking_`; a question of before only clears its own.
    client.asking_ = true;
    const uint64_t question = ++client.question_;
    const node::Level level =
        client.confirm_replicas_ ? node::Level::kReplicas : client.options_.level;
    client.confirm_replicas_ = false;
    client.links_.Post([self, marks, seqs, question, level, connection = client.connections_] {
      auto a = self.lock();
      if (!a || !*a) return;
      Client& c = **a;
      if (!c.requests_ || c.connections_ != connection) {  // Lost meanwhile.
        if (c.question_ == question) c.asking_ = false;
        return c.Confirm();
      }
      auto ask = node::DurableAskJson(level);
      c.requests_->Ask(
          "durable", ask, [self, marks, seqs, question, level](sync::AskResult answer) {
            auto b = self.lock();
            if (!b || !*b) return;
            Client& d = **b;
            if (d.question_ == question) d.asking_ = false;
            if (!answer) {
              if (level == node::Level::kReplicas) d.confirm_replicas_ = true;  // Still wanted.
              d.confirm_error_ = answer.error().reason + ": " + answer.error().message;
              return d.Confirm();
            }
            if (auto durable = node::ParseDurableAnswer(*answer); !durable) {
              d.Break(durable.error());
              return d.Confirm();
            }
            d.confirm_error_.clear();
            // The node sent its refusal of any commit this answer covers before
            // the answer, and both were delivered here in that order (frames and
            // answers are posted to this executor as they arrive): a refused
            // commit has left `unconfirmed` by now, and is not retired.
            bool more = false;
            // Asked at Options::level or above: this answer retires.
            for (auto& [name, entry] : d.entries_) {
              auto mark = marks.find(name);
              const uint64_t last = mark == marks.end() ? 0 : mark->second;
              while (!entry.unconfirmed.empty() && entry.unconfirmed.front().number <= last) {
                entry.unconfirmed.pop_front();
              }
              more = more || !entry.unconfirmed.empty();
            }
            if (d.options_.confirmed) {
              for (const auto& [name, seq] : seqs) {
                // The mark would pass a commit refused unseen (past the window),
                // which may still be pending here.
                auto entry = d.entries_.find(name);
                if (entry == d.entries_.end() || entry->second.refused_unknown) {
                  continue;
                }
                d.options_.confirmed(name, seq, level);
              }
            }
            if (more) d.Confirm();
          });
    });
  });
}

void Client::AskAgain(const std::string& name) {
  auto timer = std::make_shared<boost::asio::steady_timer>(executor_, std::chrono::seconds(1));
  std::weak_ptr<Client*> self = self_;
  timer->async_wait([self, timer, name, connection = connections_](boost::system::error_code ec) {
    auto alive = self.lock();
    if (ec || !alive || !*alive) return;
    Client& client = **alive;
    auto it = client.entries_.find(name);
    // A new connection attaches every entry anyway.
    if (client.connections_ != connection || !client.requests_ || it == client.entries_.end() ||
        it->second.shared || it->second.attached) {
      return;
    }
    client.Queue(name);
  });
}

void Client::AnswerDurable() {
  (void)requests_->Answer(
      [this](const std::string& name, const boost::json::value&, sync::Reply reply) {
        if (name != "durable") {
          return reply.SendError({codec::Spelled(codec::Reason::kMissing),
                                  "a node's link answers only durable, not " + name,
                                  {}});
        }
        // The frames the node sent before the question are applied by now (a
        // channel delivers in order); the scheduler runs this once they are
        // stored.
        links_.Post([reply] { reply.SendResult(node::DurableAnswerJson()); });
      });
}

}  // namespace aweft
