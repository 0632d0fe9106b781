package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

func (a *app) accountCmd() *cobra.Command {
	return group("account", "Inspect the account you are connected as",
		`Show the connection, the server and the account's JetStream usage and limits.`,
		`  natsio account info
  natsio account info --json`,
		a.accountInfoCmd())
}

func (a *app) accountInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Show the connection, server and JetStream account information",
		Long: `Show the server you are connected to and the account's JetStream usage
(memory, storage, streams, consumers, API calls) against its limits. Without
JetStream the connection and server are still shown.`,
		Example: `  natsio account info
  natsio account info --server nats://demo.nats.io:4222`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			si := nc.ServerInfo()
			ai, jsErr := js.AccountInfo(ctx)
			if a.json {
				out := struct {
					URL       string             `json:"url"`
					Server    conn.ServerInfo    `json:"server"`
					JetStream *jsapi.AccountInfo `json:"jetstream,omitempty"`
					Error     string             `json:"jetstream_error,omitempty"`
				}{URL: nc.ConnectedURL(), Server: si, JetStream: ai}
				if jsErr != nil {
					out.Error = trimPrefixes(jsErr)
				}
				return a.printJSON(out)
			}
			cs := &section{title: "Connection:"}
			cs.add("URL", nc.ConnectedURL())
			cs.add("Client ID", strconv.FormatUint(si.ClientID, 10))
			cs.addIf("Client IP", si.ClientIP)
			cs.add("Client name", a.conn.name)
			ss := &section{title: "Server:"}
			ss.add("Name", si.ServerName)
			ss.add("ID", si.ServerID)
			ss.add("Version", si.Version)
			ss.addIf("Cluster", si.Cluster)
			ss.add("Max payload", humanBytes(si.MaxPayload))
			ss.add("TLS required", yesNo(si.TLSRequired))
			ss.add("JetStream", yesNo(si.JetStream))
			jss := &section{title: "JetStream account:"}
			switch {
			case jsErr != nil:
				jss.add("Status", "unavailable: "+trimPrefixes(jsErr))
			default:
				jss.addIf("Domain", ai.Domain)
				jss.add("Memory", humanBytes(ai.Memory)+" of "+limit(ai.Limits.MaxMemory, true))
				jss.add("Storage", humanBytes(ai.Store)+" of "+limit(ai.Limits.MaxStore, true))
				jss.add("Streams", strconv.Itoa(ai.Streams)+" of "+limit(ai.Limits.MaxStreams, false))
				jss.add("Consumers", strconv.Itoa(ai.Consumers)+" of "+limit(ai.Limits.MaxConsumers, false))
				jss.add("API level", strconv.Itoa(ai.API.Level))
				jss.add("API requests", commas(ai.API.Total)+" ("+commas(ai.API.Errors)+" errors)")
			}
			a.sections(cs, ss, jss)
			return nil
		},
	}
}
